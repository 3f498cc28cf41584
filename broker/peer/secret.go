package peer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// MinSecretLength is the shortest cluster secret accepted (the operator
// generates 64 hex characters).
const MinSecretLength = 16

// Secret is the cluster secret brokers prove to each other on every peer
// call. It never prints.
type Secret struct{ value string }

// ErrWeakSecret refuses a secret shorter than MinSecretLength.
var ErrWeakSecret = errors.New("cluster secret too short")

// NewSecret wraps a secret's text; surrounding whitespace (a trailing
// newline in a mounted file) is not part of it.
func NewSecret(s string) (Secret, error) {
	s = strings.TrimSpace(s)
	if len(s) < MinSecretLength {
		return Secret{}, fmt.Errorf("%w: %d characters, want at least %d", ErrWeakSecret, len(s), MinSecretLength)
	}
	return Secret{value: s}, nil
}

// ReadSecretFile reads a secret from a file, such as a mounted Kubernetes
// Secret key.
func ReadSecretFile(path string) (Secret, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Secret{}, fmt.Errorf("cluster secret: %w", err)
	}
	s, err := NewSecret(string(b))
	if err != nil {
		return Secret{}, fmt.Errorf("cluster secret %s: %w", path, err)
	}
	return s, nil
}

// GenerateSecret is a new random secret: 32 bytes from crypto/rand, as 64
// hex characters.
func GenerateSecret() Secret {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return Secret{value: hex.EncodeToString(b)}
}

// IsZero reports whether the secret was never set.
func (s Secret) IsZero() bool { return s.value == "" }

// Reveal is the secret's text, for writing it where another broker reads
// it (a file a test cluster shares).
func (s Secret) Reveal() string { return s.value }

func (s Secret) String() string { return "[redacted]" }

// GoString keeps %#v from printing it either.
func (s Secret) GoString() string { return "peer.Secret{[redacted]}" }

// matches compares in constant time.
func (s Secret) matches(got string) bool {
	return s.value != "" && subtle.ConstantTimeCompare([]byte(s.value), []byte(got)) == 1
}
