// Package export is what a person exports of Palaver (DESIGN.md §18): the
// Exporter gathers a conversation or a project as the person may keep it
// (gather.go), by the hub's rules of who sees what, and Write writes it as
// one zip archive: export.md, the export as Markdown for people to read,
// with each message's provenance label, authority badges and times;
// export.json, every field of it (Document); and images/, a project's
// images as files. The command line, the REST API and the dashboard all
// export here.
package export

import (
	"archive/zip"
	"context"
	"io"
)

// ContentType is the archive's media type.
const ContentType = "application/zip"

// The archive's files.
const (
	MarkdownFile = "export.md"
	JSONFile     = "export.json"
)

// Filename is the name to save the archive under: palaver-ID.zip, ID the
// project's or the conversation's.
func Filename(e *Export) string {
	switch {
	case e.Project != nil:
		return "palaver-" + e.Project.Project.ID + ".zip"
	case len(e.Conversations) == 1:
		return "palaver-" + e.Conversations[0].Conversation.ID + ".zip"
	}
	return "palaver-export.zip"
}

// Write writes e to w as a zip archive: export.md, export.json, and each of
// a project's images under images/ (ImageFile). It streams: nothing but
// one image at a time is held in memory beyond e itself.
func Write(ctx context.Context, w io.Writer, e *Export) error {
	z := zip.NewWriter(w)
	file := func(name string, method uint16) (io.Writer, error) {
		return z.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: e.At})
	}
	f, err := file(MarkdownFile, zip.Deflate)
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, e); err != nil {
		return err
	}
	if f, err = file(JSONFile, zip.Deflate); err != nil {
		return err
	}
	if err := writeJSON(f, e); err != nil {
		return err
	}
	if e.Project != nil {
		for _, img := range e.Project.Images {
			if err := ctx.Err(); err != nil {
				return err
			}
			data, err := e.ImageData(ctx, img)
			if err != nil {
				return err
			}
			// PNG, JPEG, GIF and WebP are compressed already.
			if f, err = file(ImageFile(img), zip.Store); err != nil {
				return err
			}
			if _, err := f.Write(data); err != nil {
				return err
			}
		}
	}
	return z.Close()
}
