package tlsconf

import "fmt"

// Mode is how the transports between brokers use TLS.
type Mode string

const (
	// ModeOff: plain connections only.
	ModeOff Mode = "off"
	// ModePermissive: listeners take TLS and plain connections; dialling
	// tries TLS and falls back to plain with a peer that has no TLS yet.
	ModePermissive Mode = "permissive"
	// ModeRequired: TLS only, both ways.
	ModeRequired Mode = "required"
)

// ParseMode reads a --peer-tls value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeOff, ModePermissive, ModeRequired:
		return m, nil
	}
	return "", fmt.Errorf("peer TLS mode %q: want off, permissive or required", s)
}
