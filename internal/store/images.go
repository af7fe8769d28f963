package store

import (
	"context"
	"database/sql"

	"github.com/palaverhq/palaver/internal/hub"
)

// Images (§8): a project's row for each picture, its bytes in blobs by
// SHA-256, stored once.

const imageCols = `id, project_id, sha256, mime, size, filename, alt, uploaded_by, instance, created_at`

func scanImage(row scanner) (*hub.Image, error) {
	var img hub.Image
	var created sql.NullInt64
	if err := row.Scan(&img.ID, &img.ProjectID, &img.SHA256, &img.MIME, &img.Size, &img.Filename, &img.Alt, &img.UploadedBy, &img.Instance, &created); err != nil {
		return nil, err
	}
	img.CreatedAt = fromMS(created)
	return &img, nil
}

func (d queries) Image(ctx context.Context, id string) (*hub.Image, error) {
	img, err := scanImage(d.q.QueryRowContext(ctx, `SELECT `+imageCols+` FROM images WHERE id = ?`, id))
	return img, dbErr("image", err)
}

func (d queries) ImageBySHA(ctx context.Context, projectID, sha256 string) (*hub.Image, error) {
	img, err := scanImage(d.q.QueryRowContext(ctx, `SELECT `+imageCols+` FROM images WHERE project_id = ? AND sha256 = ?`, projectID, sha256))
	return img, dbErr("image by hash", err)
}

func (d queries) ImageData(ctx context.Context, sha256 string) ([]byte, error) {
	var data []byte
	err := d.q.QueryRowContext(ctx, `SELECT data FROM blobs WHERE sha256 = ?`, sha256).Scan(&data)
	return data, dbErr("image data", err)
}

func (d queries) InsertImage(ctx context.Context, img *hub.Image, data []byte) error {
	if err := d.exec(ctx, "insert blob", `INSERT INTO blobs (sha256, data) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING`, img.SHA256, data); err != nil {
		return err
	}
	return d.exec(ctx, "insert image", `INSERT INTO images (`+imageCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		img.ID, img.ProjectID, img.SHA256, img.MIME, img.Size, img.Filename, img.Alt, img.UploadedBy, img.Instance, ms(img.CreatedAt))
}

func (d queries) Images(ctx context.Context, projectID string) ([]*hub.Image, error) {
	return queryAll(ctx, d.q, "images", scanImage, `SELECT `+imageCols+` FROM images WHERE project_id = ? ORDER BY created_at DESC, id DESC`, projectID)
}
