package hub

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

// Id kinds: the prefix of each kind of id the hub makes, before the "_".
const (
	IDUser           = "usr"
	IDAgent          = "agt"
	IDToken          = "tok"
	IDConversation   = "conv"
	IDMessage        = "msg"
	IDGrantRequest   = "gr"
	IDInboundAsk     = "in"
	IDQuestion       = "q"
	IDContact        = "ct"
	IDProject        = "proj"
	IDRequest        = "pr"
	IDItem           = "item"
	IDImage          = "img"
	IDLogin          = "lgn"
	IDInvite         = "inv"
	IDWebhook        = "wh"
	IDWebhookCall    = "whc"
	IDWebhookAttempt = "wha"
	IDPermission     = "perm"
	IDRemoteCall     = "rmc"
	IDNotifyTarget   = "nt"
	IDNotification   = "ntf"
	IDNotifyLog      = "ntl"
)

// idKind is the kind of an id: its prefix ("" for a string with none).
func idKind(id string) string {
	kind, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return kind
}

// Crockford's base32, lower-cased: ids sort by creation time and read well.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns prefix + "_" + 26 characters: 48 bits of Unix milliseconds
// then 80 random bits, so ids made later sort later (within a millisecond,
// in random order).
func NewID(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	rand.Read(b[6:])
	// 128 bits → 26 base32 digits (130 bits, the top two always zero).
	out := make([]byte, 0, len(prefix)+1+26)
	out = append(out, prefix...)
	out = append(out, '_')
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		shift := uint(i * 5)
		var v uint64
		switch {
		case shift >= 64:
			v = hi >> (shift - 64)
		case shift > 59:
			v = lo>>shift | hi<<(64-shift)
		default:
			v = lo >> shift
		}
		out = append(out, idAlphabet[v&31])
	}
	return string(out)
}
