package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/hub"
)

// runExport: palaver export --user HANDLE (--conversation ID | --project
// ID) [-o FILE] — a conversation or a project as the person may keep it
// (§18): one zip archive of export.md, export.json and a project's images.
func runExport(ctx context.Context, e *env, args []string) error {
	var conversation, project, out string
	return asPerson(ctx, e, args, "export --user HANDLE (--conversation CONVERSATION_ID | --project PROJECT_ID) [-o FILE]", 0,
		func(fs *flag.FlagSet) {
			fs.StringVar(&conversation, "conversation", "", "`CONVERSATION_ID`: the conversation to export (required unless --project)")
			fs.StringVar(&project, "project", "", "`PROJECT_ID`: the project to export, with its threads, items and images")
			fs.StringVar(&out, "o", "", "`FILE` to write the archive to, - for stdout (default palaver-ID.zip in the current folder)")
		},
		func(a *admin, u *hub.User) error {
			if conversation != "" && project != "" {
				fmt.Fprintln(e.stderr, "palaver export: give --conversation for one conversation or --project for a project with its threads, not both")
				return errUsage
			}
			exports := export.New(a.hub, a.db)
			var x *export.Export
			var err error
			if project != "" {
				x, err = exports.Project(ctx, u, project)
			} else {
				x, err = exports.Conversation(ctx, u, conversation)
			}
			if err != nil {
				return err
			}
			if out == "-" {
				return export.Write(ctx, e.stdout, x)
			}
			if out == "" {
				out = export.Filename(x)
			}
			if err := writeFile(out, func(f *os.File) error { return export.Write(ctx, f, x) }); err != nil {
				return err
			}
			n := 0
			for _, c := range x.Conversations {
				n += len(c.Messages)
			}
			if p := x.Project; p != nil {
				fmt.Fprintf(e.stdout, "exported %s with %s (%s), %s and %s to %s\n", p.Project.ID, count(len(x.Conversations), "thread"),
					count(n, "message"), count(len(p.Items), "item"), count(len(p.Images), "image"), absPath(out))
			} else {
				fmt.Fprintf(e.stdout, "exported %s (%s) to %s\n", x.Conversations[0].Conversation.ID, count(n, "message"), absPath(out))
			}
			return nil
		})
}

// writeFile writes a file whole or not at all: into a temporary file
// beside it, renamed over it once write has succeeded.
func writeFile(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
