package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// Error is a problem a caller of Client found with an answer (a status,
// a size), in words fit to show the person who named the address.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Describe says what went wrong with a call made with Client, in words fit
// to show the person who named the address: what was wrong (refused, not
// found, no answer, not trusted…), never a raw network error, a resolver's
// address or an address the name resolved to other than the refused one.
// The cause itself belongs in the log.
func Describe(err error) string {
	var (
		said    *Error
		refused *RefusedError
		dns     *net.DNSError
		netErr  net.Error
		unknown x509.UnknownAuthorityError
		name    x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &said):
		return said.Msg
	case errors.As(err, &refused):
		return "its host is at " + refused.Refusal.String() + ", which this server does not call"
	case errors.Is(err, ErrNotHTTPS):
		return "it is not an https URL"
	case errors.Is(err, errRedirect):
		return "it answered with a redirect, which is not followed"
	case errors.As(err, &dns) && dns.IsNotFound:
		return "its host name does not resolve to any address"
	case errors.As(err, &dns):
		return "its host name could not be looked up (DNS did not answer); try again later"
	case errors.As(err, &name):
		return "its TLS certificate is not for its host"
	case errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &verify):
		return "its TLS certificate is not trusted (expired, self-signed, or from an unknown authority)"
	case errors.As(err, &record):
		return "it does not speak TLS at that port"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "it did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing accepts connections at its host and port (connection refused)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "it closed the connection before answering"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "its host could not be reached (no route)"
	}
	return "it could not be reached"
}
