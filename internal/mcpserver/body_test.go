package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAtMostIsReadAll: readAtMost reads what io.ReadAll of a
// LimitReader reads, whatever length the body announces, whole or cut at
// the limit, in reads of any size, and passes on a read's error.
func TestReadAtMostIsReadAll(t *testing.T) {
	const limit = 10
	for _, body := range []string{"", "{}", "0123456789", "0123456789abc"} {
		for _, size := range []int64{-1, 0, 1, 2, 5, 9, 10, 11, 20} {
			for _, half := range []bool{false, true} {
				src := func() io.Reader {
					if half {
						return iotest.HalfReader(strings.NewReader(body))
					}
					return strings.NewReader(body)
				}
				want, _ := io.ReadAll(io.LimitReader(src(), limit))
				got, err := readAtMost(src(), size, limit)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("body %q announced %d (half reads %v): %q, %v; want %q", body, size, half, got, err, want)
				}
			}
		}
	}
	r := io.MultiReader(strings.NewReader("01"), iotest.ErrReader(io.ErrUnexpectedEOF))
	if got, err := readAtMost(r, 5, limit); string(got) != "01" || err != io.ErrUnexpectedEOF {
		t.Errorf("a body cut short: %q, %v; want \"01\" and its error", got, err)
	}
}
