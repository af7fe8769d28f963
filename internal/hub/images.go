package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // the decoders image.DecodeConfig reads
	_ "image/jpeg"
	_ "image/png"
	"strings"

	_ "golang.org/x/image/webp"
)

// Images (§8): PNG, JPEG, GIF or WebP pictures stored in a project,
// recognised by their bytes, never by their name, and shown only to the
// project's members. The same bytes in the same project are one image.

// MaxImageBytes is the largest image, decoded (2 MB).
const MaxImageBytes = 2 << 20

// MaxImagePixels bounds an image's width × height (25 megapixels), read
// from its header before anything decodes it, so a small file cannot stand
// for a picture that takes gigabytes to show: a 25-megapixel picture
// decodes to at most 100 MB (4 bytes a pixel), a screenshot of a 5K
// screen is 15.
const MaxImagePixels = 25_000_000

// imageMIME is the type of image data is, read from its bytes — its header
// parses as one of the kinds a project takes — or "".
func imageMIME(data []byte) (string, image.Config) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	switch {
	case err != nil, cfg.Width < 1, cfg.Height < 1:
		return "", cfg
	case format == "png", format == "jpeg", format == "gif", format == "webp":
		return "image/" + format, cfg
	}
	return "", cfg
}

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

// decodeImage decodes an upload and checks it is an image of a kind a
// project takes, within MaxImageBytes and MaxImagePixels; it returns the
// bytes and their type.
func decodeImage(s string) ([]byte, string, error) {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(s), "data:"); ok {
		_, s, _ = strings.Cut(rest, ",")
	}
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return nil, "", invalid("", "data_base64 is required: the image's bytes in base64")
	}
	if base64.StdEncoding.DecodedLen(len(s)) > MaxImageBytes+3 {
		return nil, "", invalid("too_large", "this image is about %d bytes; the limit is %d bytes (2 MB): make it smaller", base64.StdEncoding.DecodedLen(len(s)), MaxImageBytes)
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, "", invalid("", "data_base64 is not base64 (%v): send the image's bytes in standard base64", err)
	}
	if len(data) > MaxImageBytes {
		return nil, "", invalid("too_large", "this image is %d bytes; the limit is %d bytes (2 MB): make it smaller", len(data), MaxImageBytes)
	}
	mime, cfg := imageMIME(data)
	if mime == "" {
		return nil, "", invalid("not_an_image", "these bytes are not a PNG, JPEG, GIF or WebP image (the kind is read from the bytes, not the name)")
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxImagePixels {
		return nil, "", invalid("too_large", "this image is %d × %d pixels (%d megapixels); the limit is %d megapixels (width × height): scale it down", cfg.Width, cfg.Height, (px+999_999)/1_000_000, MaxImagePixels/1_000_000)
	}
	return data, mime, nil
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
