package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

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
func (h *Hub) UploadImage(ctx context.Context, c *Caller, projectID string, up ImageUpload) (*Image, string, error) {
	data, mime, err := decodeImage(up.DataBase64)
	if err != nil {
		return nil, "", err
	}
	filename, err := checkText("filename", strings.TrimSpace(up.Filename), 0, MaxNote)
	if err != nil {
		return nil, "", err
	}
	alt, err := checkText("alt", strings.TrimSpace(up.Alt), 0, MaxNote)
	if err != nil {
		return nil, "", err
	}
	instance, err := h.seeInstance(ctx, c, up.Instance)
	if err != nil {
		return nil, "", err
	}
	if err := h.homeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	var img *Image
	err = retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			p, _, access, err := agentProject(ctx, tx, c.Agent, projectID)
			if err != nil {
				return nil, err
			}
			if access != AccessSpeak {
				return nil, deny(AccessListen, "%s: you may not add images to it", listenWhy(p))
			}
			if img, err = tx.ImageBySHA(ctx, p.ID, hex.EncodeToString(sum[:])); err == nil {
				return nil, nil // these bytes are in the project already
			} else if !errors.Is(err, ErrNoRows) {
				return nil, err
			}
			now := h.now()
			img = &Image{ID: NewID(IDImage, now), ProjectID: p.ID, SHA256: hex.EncodeToString(sum[:]), MIME: mime, Size: len(data),
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
		return nil, "", invalid(pe.Code, "%s", escapeBraces(pe.Msg))
	}
	return data, mime, err
}

// imageMarkdown is the snippet a post places to show the image.
func imageMarkdown(img *Image, alt string) string {
	if alt == "" {
		alt = img.Filename
	}
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, "\n", " ")
	return fmt.Sprintf("![%s](%s)", r.Replace(alt), ImagePath(img.ProjectID, img.ID))
}

// ProjectImageSource is the rule of images in a project's posts (§8,
// §11): only that project's own images show. For the renderer, it allows a
// destination that is the path of an image of the project, and nothing
// else; anything else shows as its alt text.
func ProjectImageSource(projectID string) func(dest string) (string, bool) {
	prefix := ImagePath(projectID, "")
	return func(dest string) (string, bool) {
		id, ok := strings.CutPrefix(dest, prefix)
		return dest, ok && projectID != "" && idKind(id) == IDImage && !strings.ContainsAny(id, "/?#\\")
	}
}

// ProjectImage is an image and its bytes, for a member of its project;
// anyone else, and an image of another project, gets not_found.
func (h *Hub) ProjectImage(ctx context.Context, u *User, projectID, imageID string) (*Image, []byte, error) {
	p, err := memberProject(ctx, h.store, u, projectID)
	if err != nil {
		return nil, nil, asOutcome(err)
	}
	img, err := h.store.Image(ctx, imageID)
	if errors.Is(err, ErrNoRows) || (err == nil && img.ProjectID != p.ID) {
		return nil, nil, notFound("no image %q is in this project", echo(imageID))
	}
	if err != nil {
		return nil, nil, AsError(err)
	}
	data, err := h.store.ImageData(ctx, img.SHA256)
	if err != nil {
		return nil, nil, AsError(err)
	}
	return img, data, nil
}

// ImageReads are the queries of images (Reader embeds them).
type ImageReads interface {
	Image(ctx context.Context, id string) (*Image, error)
	// Images lists the project's images, newest first.
	Images(ctx context.Context, projectID string) ([]*Image, error)
	// ImageBySHA finds the project's image with these bytes.
	ImageBySHA(ctx context.Context, projectID, sha256 string) (*Image, error)
	// ImageData returns the bytes stored under a SHA-256.
	ImageData(ctx context.Context, sha256 string) ([]byte, error)
}

// ImageWrites are the writes of images (Tx embeds them).
type ImageWrites interface {
	// InsertImage stores an image row and its bytes (kept once per SHA-256).
	InsertImage(ctx context.Context, img *Image, data []byte) error
}
