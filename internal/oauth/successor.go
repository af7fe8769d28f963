package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"
)

// RefreshGrace is how long after its use a refresh token sent again gets
// the same new tokens instead of revoking its grant (§10.6): clients
// refresh in parallel when several calls meet an expired token.
const RefreshGrace = 30 * time.Second

// The tokens a refresh token was rotated into are kept with it, so that
// a second refresh within RefreshGrace can be answered with them — and
// tokens are stored only as hashes. So they are sealed (AES-256-GCM) with
// a key derived (HKDF-SHA256) from the used refresh token itself: the
// server keeps only that token's SHA-256 hash, from which the key cannot
// be made, so what it keeps opens only for a client that holds the
// refresh token, and the server holds no usable secret.

const successorInfo = "palaver refresh token successor v1"

func successorAEAD(refresh string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(refresh), nil, successorInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealSuccessor seals the tokens out for the refresh token refresh, whose
// row is tokenID (bound in, so a sealed pair opens only where it was
// kept): a random nonce and the sealed access and refresh tokens.
func sealSuccessor(refresh, tokenID string, out *IssuedTokens) ([]byte, error) {
	aead, err := successorAEAD(refresh)
	if err != nil {
		return nil, fmt.Errorf("sealing a refresh token's successor: %w", err)
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(out.AccessToken)+1+len(out.RefreshToken)+aead.Overhead())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, []byte(out.AccessToken+" "+out.RefreshToken), []byte(tokenID)), nil
}

// openSuccessor opens what sealSuccessor sealed; false when refresh is
// not the token it was sealed for.
func openSuccessor(refresh, tokenID string, sealed []byte) (*IssuedTokens, bool) {
	aead, err := successorAEAD(refresh)
	if err != nil || len(sealed) < aead.NonceSize() {
		return nil, false
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(tokenID))
	if err != nil {
		return nil, false
	}
	access, next, ok := strings.Cut(string(plain), " ")
	if !ok {
		return nil, false
	}
	return &IssuedTokens{AccessToken: access, RefreshToken: next}, true
}
