package picture

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"testing"
)

// TestDecode: an image's kind and size come from its bytes; what is not an
// image of a kind a project takes, or is over the limits, is refused with
// its code.
func TestDecode(t *testing.T) {
	pngOf := func(w, h int) string {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	small := pngOf(2, 3)
	for _, tc := range []struct {
		name, in, mime, code string
	}{
		{"a PNG", small, "image/png", ""},
		{"a data URL with line breaks", "data:image/png;base64," + small[:8] + "\n" + small[8:], "image/png", ""},
		{"unpadded", base64.RawStdEncoding.EncodeToString(must(base64.StdEncoding.DecodeString(small))), "image/png", ""},
		{"empty", " ", "", "required"},
		{"not base64", "!!!", "", "not base64"},
		{"not an image", base64.StdEncoding.EncodeToString([]byte("plain words, not a picture")), "", "not_an_image"},
		{"over the pixels", pngOf(10_000, 2_501), "", "too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, mime, err := Decode(tc.in)
			var pe *Error
			switch {
			case tc.code == "" && (err != nil || mime != tc.mime || len(data) == 0):
				t.Fatalf("Decode = %d bytes, %q, %v; want %s", len(data), mime, err, tc.mime)
			case tc.code != "" && !errors.As(err, &pe):
				t.Fatalf("Decode = %q, %v; want refused with %s", mime, err, tc.code)
			case tc.code != "" && pe.Code != tc.code && !bytes.Contains([]byte(pe.Msg), []byte(tc.code)):
				t.Fatalf("refused %+v; want %s", pe, tc.code)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
