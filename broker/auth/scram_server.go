package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The server side of a SCRAM-SHA-512 exchange (RFC 5802, RFC 7677), as
// Kafka's SaslAuthenticate carries it: the client's first message, the
// server's (nonce, salt, iterations), the client's final message with its
// proof, and the server's signature. Channel binding is not offered.

// Errors of an exchange. A front door answers both as an authentication
// failure (Kafka's SASL_AUTHENTICATION_FAILED); neither says whether the
// user exists.
var (
	// ErrBadSASLMessage is a message that does not follow RFC 5802.
	ErrBadSASLMessage = errors.New("malformed SCRAM message")
	// ErrAuthenticationFailed is a wrong proof or an unknown user.
	ErrAuthenticationFailed = errors.New("authentication failed")
)

// maxSASLMessage bounds a client message: names and nonces are short.
const maxSASLMessage = 4096

// ScramServer runs one exchange. Step takes each client message in turn.
type ScramServer struct {
	lookup func(name string) *User
	// fakeKey derives a salt for unknown users, so that they get a
	// server-first message like a real user's and fail only at the proof.
	fakeKey []byte

	step          int
	user          string
	cred          *Credential
	gs2Header     string
	clientNonce   string
	nonce         string
	clientBare    string
	serverFirst   string
	authenticated bool
}

// NewScramServer starts an exchange that finds users with lookup.
func NewScramServer(lookup func(name string) *User) *ScramServer {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &ScramServer{lookup: lookup, fakeKey: key}
}

// Step answers the client's next message: the server-first message, then
// the server-final message with done true. Any error ends the exchange.
func (s *ScramServer) Step(msg []byte) (reply []byte, done bool, err error) {
	if len(msg) > maxSASLMessage {
		return nil, true, fmt.Errorf("%w: %d bytes", ErrBadSASLMessage, len(msg))
	}
	switch s.step {
	case 0:
		s.step++
		reply, err := s.clientFirst(string(msg))
		return reply, err != nil, err
	case 1:
		s.step++
		reply, err := s.clientFinal(string(msg))
		return reply, true, err
	}
	return nil, true, fmt.Errorf("%w: the exchange is over", ErrBadSASLMessage)
}

// Principal is who the exchange authenticated, once Step said done
// without an error.
func (s *ScramServer) Principal() (Principal, bool) {
	if !s.authenticated {
		return Principal{}, false
	}
	return Principal{Name: s.user}, true
}

// clientFirst reads gs2-header and client-first-message-bare:
// "n,," ["a=" authzid] then "n=" user ",r=" nonce [",ext"].
func (s *ScramServer) clientFirst(msg string) ([]byte, error) {
	cbind, rest, ok := strings.Cut(msg, ",")
	if !ok {
		return nil, fmt.Errorf("%w: no GS2 header", ErrBadSASLMessage)
	}
	switch {
	case cbind == "n", cbind == "y":
	case strings.HasPrefix(cbind, "p="):
		return nil, fmt.Errorf("%w: channel binding is not supported", ErrBadSASLMessage)
	default:
		return nil, fmt.Errorf("%w: GS2 header %q", ErrBadSASLMessage, cbind)
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, fmt.Errorf("%w: no client-first-message-bare", ErrBadSASLMessage)
	}
	if authzid != "" && !strings.HasPrefix(authzid, "a=") {
		return nil, fmt.Errorf("%w: authzid %q", ErrBadSASLMessage, authzid)
	}
	s.gs2Header = cbind + "," + authzid + ","
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, fmt.Errorf("%w: want n=user,r=nonce", ErrBadSASLMessage)
	}
	user, err := unescapeName(attrs[0][2:])
	if err != nil {
		return nil, err
	}
	if a := strings.TrimPrefix(authzid, "a="); authzid != "" {
		if name, err := unescapeName(a); err != nil || name != user {
			return nil, fmt.Errorf("%w: authorization id %q is not the user", ErrBadSASLMessage, a)
		}
	}
	s.clientNonce = attrs[1][2:]
	if s.clientNonce == "" || !printable(s.clientNonce) {
		return nil, fmt.Errorf("%w: bad client nonce", ErrBadSASLMessage)
	}
	s.user, s.clientBare = user, bare

	if u := s.lookup(user); u != nil && u.SCRAM != nil && u.SCRAM.Validate() == nil {
		s.cred = u.SCRAM
	}
	salt, iterations := s.fakeSalt(user), MinIterations
	if s.cred != nil {
		salt, iterations = s.cred.Salt, s.cred.Iterations
	}
	serverNonce := make([]byte, 24)
	if _, err := rand.Read(serverNonce); err != nil {
		return nil, err
	}
	s.nonce = s.clientNonce + base64.RawStdEncoding.EncodeToString(serverNonce)
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(salt) + ",i=" + strconv.Itoa(iterations)
	return []byte(s.serverFirst), nil
}

// clientFinal checks "c=" binding ",r=" nonce [",ext"] ",p=" proof.
func (s *ScramServer) clientFinal(msg string) ([]byte, error) {
	withoutProof, proofAttr, ok := cutLast(msg, ",p=")
	if !ok {
		return nil, fmt.Errorf("%w: no proof", ErrBadSASLMessage)
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, fmt.Errorf("%w: want c=binding,r=nonce", ErrBadSASLMessage)
	}
	if attrs[0][2:] != base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
		return nil, fmt.Errorf("%w: channel binding differs from the GS2 header", ErrBadSASLMessage)
	}
	// The nonce must end with the one the server sent: librdkafka sends its
	// own nonce again before the server's whole one (which starts with
	// it), and Kafka's ScramSaslServer takes that; the proof covers the
	// message as sent.
	if !strings.HasSuffix(attrs[1][2:], s.nonce) {
		return nil, fmt.Errorf("%w: nonce differs", ErrBadSASLMessage)
	}
	proof, err := base64.StdEncoding.DecodeString(proofAttr)
	if err != nil || len(proof) != sha512.Size {
		return nil, fmt.Errorf("%w: bad proof", ErrBadSASLMessage)
	}
	if s.cred == nil {
		return nil, ErrAuthenticationFailed
	}
	authMessage := s.clientBare + "," + s.serverFirst + "," + withoutProof
	signature := mac(s.cred.StoredKey, authMessage)
	clientKey := make([]byte, sha512.Size)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ signature[i]
	}
	stored := sha512.Sum512(clientKey)
	if subtle.ConstantTimeCompare(stored[:], s.cred.StoredKey) != 1 {
		return nil, ErrAuthenticationFailed
	}
	s.authenticated = true
	return []byte("v=" + base64.StdEncoding.EncodeToString(mac(s.cred.ServerKey, authMessage))), nil
}

// fakeSalt is a stable salt for a user that does not exist.
func (s *ScramServer) fakeSalt(user string) []byte {
	h := hmac.New(sha512.New, s.fakeKey)
	h.Write([]byte(user))
	return h.Sum(nil)[:32]
}

// unescapeName reads a saslname: "=2C" is ",", "=3D" is "=", and no
// other "=" may appear.
func unescapeName(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", fmt.Errorf("%w: bad escape in user name", ErrBadSASLMessage)
		}
		i += 2
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("%w: empty user name", ErrBadSASLMessage)
	}
	return b.String(), nil
}

// printable reports whether a nonce holds only printable ASCII but ",".
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return true
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
