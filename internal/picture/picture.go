// Package picture reads an uploaded image (DESIGN.md §8): its bytes from
// base64, and its kind and size from its header — never from its name, and
// never by decoding the whole picture. Storing it and who may see it are
// the hub's.
package picture

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/gif" // the decoders image.DecodeConfig reads
	_ "image/jpeg"
	_ "image/png"
	"strings"

	_ "golang.org/x/image/webp"
)

// MaxBytes is the largest image, decoded (2 MB).
const MaxBytes = 2 << 20

// MaxPixels bounds an image's width × height (25 megapixels), read from its
// header before anything decodes it, so a small file cannot stand for a
// picture that takes gigabytes to show: a 25-megapixel picture decodes to
// at most 100 MB (4 bytes a pixel), a screenshot of a 5K screen is 15.
const MaxPixels = 25_000_000

// An Error refuses an upload: Code is "" (a bad argument), too_large or
// not_an_image; Msg says what to send instead.
type Error struct {
	Code, Msg string
}

func (e *Error) Error() string { return e.Msg }

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Decode reads an upload — standard base64, padded or not, a data: URL
// prefix and line breaks allowed — and checks it is a PNG, JPEG, GIF or
// WebP image within MaxBytes and MaxPixels; it returns the bytes and their
// MIME type, or an *Error.
func Decode(s string) ([]byte, string, error) {
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
		return nil, "", refuse("", "data_base64 is required: the image's bytes in base64")
	}
	if base64.StdEncoding.DecodedLen(len(s)) > MaxBytes+3 {
		return nil, "", refuse("too_large", "this image is about %d bytes; the limit is %d bytes (2 MB): make it smaller", base64.StdEncoding.DecodedLen(len(s)), MaxBytes)
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, "", refuse("", "data_base64 is not base64 (%v): send the image's bytes in standard base64", err)
	}
	if len(data) > MaxBytes {
		return nil, "", refuse("too_large", "this image is %d bytes; the limit is %d bytes (2 MB): make it smaller", len(data), MaxBytes)
	}
	mime, cfg := kind(data)
	if mime == "" {
		return nil, "", refuse("not_an_image", "these bytes are not a PNG, JPEG, GIF or WebP image (the kind is read from the bytes, not the name)")
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > MaxPixels {
		return nil, "", refuse("too_large", "this image is %d × %d pixels (%d megapixels); the limit is %d megapixels (width × height): scale it down", cfg.Width, cfg.Height, (px+999_999)/1_000_000, MaxPixels/1_000_000)
	}
	return data, mime, nil
}

// kind is the type of image data is, read from its bytes — its header
// parses as one of the kinds a project takes — or "".
func kind(data []byte) (string, image.Config) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	switch {
	case err != nil, cfg.Width < 1, cfg.Height < 1:
		return "", cfg
	case format == "png", format == "jpeg", format == "gif", format == "webp":
		return "image/" + format, cfg
	}
	return "", cfg
}
