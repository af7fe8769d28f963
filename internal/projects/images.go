package projects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/picture"
)

// Images (§8): PNG, JPEG, GIF or WebP pictures stored in a project,
// recognised by their bytes, never by their name, and shown only to the
// project's members. The same bytes in the same project are one image.

// The limits of an image (internal/picture reads them from its bytes).
const (
	MaxImageBytes  = picture.MaxBytes
	MaxImagePixels = picture.MaxPixels
)

// ImageUpload is upload_image's arguments.
type ImageUpload struct {
	DataBase64 string // standard base64, padded or not; a data: URL prefix and line breaks are allowed
	Filename   string
	Alt        string
	Instance   string
}

// ImagePath is where an image of a project is shown to its members; the
// markdown snippets point at it and the renderer shows only this project's.
func ImagePath(projectID, imageID string) string {
	return "/projects/" + projectID + "/images/" + imageID
}

// UploadImage is upload_image: the image stored in the project (it needs
// speak), and a markdown snippet to place in a post.
func (x *Projects) UploadImage(ctx context.Context, c *hub.Caller, projectID string, up ImageUpload) (*hub.Image, string, error) {
	data, mime, err := decodeImage(up.DataBase64)
	if err != nil {
		return nil, "", err
	}
	filename, err := hub.CheckText("filename", strings.TrimSpace(up.Filename), 0, hub.MaxNote)
	if err != nil {
		return nil, "", err
	}
	alt, err := hub.CheckText("alt", strings.TrimSpace(up.Alt), 0, hub.MaxNote)
	if err != nil {
		return nil, "", err
	}
	instance, err := x.hub.SeeInstance(ctx, c, up.Instance)
	if err != nil {
		return nil, "", err
	}
	if err := x.hub.HomeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	var img *hub.Image
	err = hub.RetryDuplicate(func() error {
		return x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
			p, err := hub.SpeakInProject(ctx, tx, c.Agent, projectID, "you may not add images to it")
			if err != nil {
				return nil, err
			}
			if img, err = tx.ImageBySHA(ctx, p.ID, hex.EncodeToString(sum[:])); err == nil {
				return nil, nil // these bytes are in the project already
			} else if !errors.Is(err, hub.ErrNoRows) {
				return nil, err
			}
			now := x.hub.Now()
			img = &hub.Image{ID: hub.NewID(hub.IDImage, now), ProjectID: p.ID, SHA256: hex.EncodeToString(sum[:]), MIME: mime, Size: len(data),
				Filename: filename, Alt: alt, UploadedBy: c.Agent.ID, Instance: instance, CreatedAt: now}
			return nil, tx.InsertImage(ctx, img, data)
		})
	})
	if err != nil {
		return nil, "", err
	}
	if alt == "" {
		alt = filename
	}
	return img, imageMarkdown(img, alt), nil
}

// decodeImage reads an upload (picture.Decode), its refusals hub Errors.
func decodeImage(s string) ([]byte, string, error) {
	data, mime, err := picture.Decode(s)
	var pe *picture.Error
	if errors.As(err, &pe) {
		return nil, "", hub.Invalid(pe.Code, "%s", hub.EscapeBraces(pe.Msg))
	}
	return data, mime, err
}

// imageMarkdown is the snippet a post places to show the image.
func imageMarkdown(img *hub.Image, alt string) string {
	if alt == "" {
		alt = img.Filename
	}
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, "\n", " ")
	return fmt.Sprintf("![%s](%s)", r.Replace(alt), ImagePath(img.ProjectID, img.ID))
}

// ImageSource is the rule of images in a project's posts (§8, §11): only
// that project's own images show. For the renderer, it allows a
// destination that is the path of an image of the project, and nothing
// else; anything else shows as its alt text.
func ImageSource(projectID string) func(dest string) (string, bool) {
	prefix := ImagePath(projectID, "")
	return func(dest string) (string, bool) {
		id, ok := strings.CutPrefix(dest, prefix)
		return dest, ok && projectID != "" && hub.IDKind(id) == hub.IDImage && !strings.ContainsAny(id, "/?#\\")
	}
}

// ProjectImage is an image and its bytes, for a member of its project;
// anyone else, and an image of another project, gets not_found.
func (x *Projects) ProjectImage(ctx context.Context, u *hub.User, projectID, imageID string) (*hub.Image, []byte, error) {
	p, err := x.hub.MemberProject(ctx, u, projectID)
	if err != nil {
		return nil, nil, hub.AsOutcome(err)
	}
	img, err := x.store.Image(ctx, imageID)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && img.ProjectID != p.ID) {
		return nil, nil, hub.NotFound("no image %q is in this project", hub.Echo(imageID))
	}
	if err != nil {
		return nil, nil, hub.AsError(err)
	}
	data, err := x.store.ImageData(ctx, img.SHA256)
	if err != nil {
		return nil, nil, hub.AsError(err)
	}
	return img, data, nil
}
