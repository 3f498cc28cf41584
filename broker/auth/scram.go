package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
)

// Mechanism is the one SCRAM mechanism the brokers take.
const Mechanism = "SCRAM-SHA-512"

// Iteration bounds of a credential: RFC 7677's minimum (and Kafka's), and
// Kafka's maximum, so a stored credential cannot make every login burn
// seconds of CPU.
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// Credential is a SCRAM-SHA-512 credential as RFC 5802 stores it: the
// salt and iteration count, StoredKey = H(HMAC(SaltedPassword, "Client
// Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"). Neither the
// password nor SaltedPassword can be read back from it.
type Credential struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
}

// ErrBadCredential is a credential the brokers refuse to store.
var ErrBadCredential = errors.New("bad SCRAM credential")

// NewCredential derives a credential from password with a random salt.
func NewCredential(password string, iterations int) (Credential, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return Credential{}, err
	}
	return DeriveCredential(password, salt, iterations)
}

// DeriveCredential derives the credential of password with salt.
func DeriveCredential(password string, salt []byte, iterations int) (Credential, error) {
	c := Credential{Salt: salt, Iterations: iterations}
	if err := c.checkParams(); err != nil {
		return Credential{}, err
	}
	if strings.ContainsRune(password, 0) {
		return Credential{}, fmt.Errorf("%w: a password may not contain NUL", ErrBadCredential)
	}
	clientKey, serverKey, err := keys(password, salt, iterations)
	if err != nil {
		return Credential{}, err
	}
	stored := sha512.Sum512(clientKey)
	c.StoredKey, c.ServerKey = stored[:], serverKey
	return c, nil
}

// Validate refuses a credential that could not have been derived: no
// salt, iterations out of bounds, keys of the wrong length.
func (c Credential) Validate() error {
	if err := c.checkParams(); err != nil {
		return err
	}
	if len(c.StoredKey) != sha512.Size || len(c.ServerKey) != sha512.Size {
		return fmt.Errorf("%w: stored_key and server_key must be %d bytes", ErrBadCredential, sha512.Size)
	}
	return nil
}

func (c Credential) checkParams() error {
	if len(c.Salt) == 0 || len(c.Salt) > 1024 {
		return fmt.Errorf("%w: salt must be 1 to 1024 bytes", ErrBadCredential)
	}
	if c.Iterations < MinIterations || c.Iterations > MaxIterations {
		return fmt.Errorf("%w: iterations %d not in [%d, %d]", ErrBadCredential, c.Iterations, MinIterations, MaxIterations)
	}
	return nil
}

// Verify reports whether password is the one the credential was derived
// from: the way a SCRAM server checks a client proof, with the password
// at hand (HTTP Basic) instead of a proof.
//
// A password with a NUL is never right: HMAC pads its key with zeros, so
// "pw" and "pw\x00" would derive the same keys (SASLprep, which SCRAM
// normalizes passwords with, prohibits NUL for that reason among others).
func (c Credential) Verify(password string) bool {
	if c.Validate() != nil || strings.ContainsRune(password, 0) {
		return false
	}
	clientKey, _, err := keys(password, c.Salt, c.Iterations)
	if err != nil {
		return false
	}
	stored := sha512.Sum512(clientKey)
	return subtle.ConstantTimeCompare(stored[:], c.StoredKey) == 1
}

// keys are ClientKey and ServerKey of RFC 5802 section 3.
func keys(password string, salt []byte, iterations int) (clientKey, serverKey []byte, err error) {
	salted, err := pbkdf2.Key(sha512.New, password, salt, iterations, sha512.Size)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadCredential, err)
	}
	return mac(salted, "Client Key"), mac(salted, "Server Key"), nil
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha512.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
