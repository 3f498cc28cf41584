package kafka

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/auth"
)

// Authentication on a Kafka listener, before any other request runs
// (docs/security.md). A TLS listener first completes the handshake; a
// verified client certificate of the cluster CA names the principal on a
// listener that authenticates by certificate (and always names the
// operator). A listener that authenticates with SASL then takes, one frame
// at a time and without reading ahead, only ApiVersions, SaslHandshake and
// SaslAuthenticate until an exchange succeeds, as Kafka's
// SaslServerAuthenticator does:
//   - SaslHandshake names the mechanism: SCRAM-SHA-512, and PLAIN only over
//     TLS since it sends the password; another is UNSUPPORTED_SASL_MECHANISM
//     and a second handshake ILLEGAL_SASL_STATE, and both disconnect.
//   - After a v1 handshake the exchange's messages travel in
//     SaslAuthenticate requests; a failure is SASL_AUTHENTICATION_FAILED
//     with a message that does not say whether the user exists, and
//     disconnects.
//   - After a v0 handshake (clients older than KIP-152) they travel as raw
//     tokens, each a 4-byte size and that many bytes, with no request
//     header; a failure disconnects, the one answer that framing has.
//   - Any other request before the exchange succeeds disconnects.
// Once authenticated, SaslHandshake and SaslAuthenticate are
// ILLEGAL_SASL_STATE (17_sasl_handshake.go).
//
// A listener without authentication takes a SASL login a client offers,
// so that turning SCRAM on (and off) broker by broker never cuts off a
// client that already has its credentials: when a connection's first
// request after ApiVersions is SaslHandshake, the exchange runs as above,
// with the same mechanisms and the same failures, and the connection
// carries the user it authenticated. A connection whose first request is
// anything else stays anonymous, and a later SaslHandshake is
// ILLEGAL_SASL_STATE, as in Kafka. Kafka's broker answers a handshake on a
// PLAINTEXT listener ILLEGAL_SASL_STATE instead: it moves clients to SASL
// through a second listener, and a KairoLog broker has one Kafka port.

// SASL mechanisms.
const (
	mechanismSCRAM = auth.Mechanism
	mechanismPlain = "PLAIN"
)

// maxSASLToken bounds a raw SASL token: SCRAM and PLAIN messages are a few
// hundred bytes.
const maxSASLToken = 64 << 10

// errSASL ends a connection whose SASL exchange failed.
var errSASL = errors.New("SASL authentication failed")

// saslServer is the server side of one mechanism's exchange.
type saslServer interface {
	// Step answers the client's next message; done once the exchange is
	// over, err when it failed.
	Step(msg []byte) (reply []byte, done bool, err error)
	// Principal is who the finished exchange authenticated.
	Principal() (auth.Principal, bool)
}

// authenticate establishes who the client of c is: false when the
// connection must close. first, when not nil, is a request that ended an
// offered login's chance on a listener without authentication; it is
// answered as the connection's first.
func (c *conn) authenticate(ctx context.Context) (id identity, first *request, ok bool) {
	id = identity{host: remoteHost(c.nc)}
	sec := c.s.opts.Security
	secure := false
	if tc, ok := c.nc.(*tls.Conn); ok {
		hctx, cancel := context.WithTimeout(ctx, c.s.opts.IOTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.s.log.Debug("Kafka TLS handshake failed", "remote", c.nc.RemoteAddr().String(), "error", err)
			return id, nil, false
		}
		secure = true
		state := tc.ConnectionState()
		if p, ok := auth.CertificatePrincipal(&state); ok && (p.Operator || sec.Authentication == auth.AuthTLS) {
			id.principal = p
		}
	}
	switch sec.Authentication {
	case auth.AuthTLS:
		if id.principal.Anonymous() {
			c.s.log.Info("Closing a Kafka connection without a client certificate of the cluster CA",
				"remote", c.nc.RemoteAddr().String())
			return id, nil, false
		}
	case auth.AuthSCRAM:
		p, _, err := c.sasl(ctx, secure, false)
		if err != nil {
			c.logReadError(err)
			return id, nil, false
		}
		id.principal = p
	default:
		p, first, err := c.sasl(ctx, secure, true)
		if err != nil {
			c.logReadError(err)
			return id, nil, false
		}
		if first == nil {
			id.principal = p
		}
		return id, first, true
	}
	return id, nil, true
}

// mechanisms are the SASL mechanisms a connection may use.
func mechanisms(secure bool) []string {
	if secure {
		return []string{mechanismSCRAM, mechanismPlain}
	}
	return []string{mechanismSCRAM}
}

// sasl runs the SASL exchange and returns the principal it authenticated.
// When optional, a first request other than ApiVersions and SaslHandshake
// ends it without one: that request is returned, to be answered.
func (c *conn) sasl(ctx context.Context, secure, optional bool) (auth.Principal, *request, error) {
	var server saslServer
	var mechanism string
	for {
		req, err := c.readRequest(ctx)
		if err != nil {
			return auth.Principal{}, nil, err
		}
		switch {
		case optional && server == nil && req.key != 18 && (req.key != 17 || req.body == nil):
			return auth.Principal{}, req, nil
		case req.key == 18 || (req.body == nil && (req.key == 17 || req.key == 36)):
			// ApiVersions, and SASL requests of versions this listener
			// does not serve, are answered as always.
			if err := c.answer(ctx, req); err != nil {
				return auth.Principal{}, nil, err
			}
		case req.key == 17:
			r := req.body.(*kmsg.SASLHandshakeRequest)
			resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
			resp.SupportedMechanisms = mechanisms(secure)
			switch {
			case server != nil:
				resp.ErrorCode = kerr.IllegalSaslState.Code
			case !slices.Contains(resp.SupportedMechanisms, r.Mechanism):
				resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			}
			if err := c.write(req, resp); err != nil {
				return auth.Principal{}, nil, err
			}
			if resp.ErrorCode != 0 {
				return auth.Principal{}, nil, fmt.Errorf("%w: %s, handshake for mechanism %q", errSASL, kerr.ErrorForCode(resp.ErrorCode), r.Mechanism)
			}
			mechanism = r.Mechanism
			server = c.newSASLServer(mechanism)
			if r.Version == 0 {
				p, err := c.rawSASL(server, mechanism)
				return p, nil, err
			}
		case req.key == 36:
			r := req.body.(*kmsg.SASLAuthenticateRequest)
			resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			if server == nil {
				resp.ErrorCode = kerr.IllegalSaslState.Code
				resp.ErrorMessage = kmsg.StringPtr("SaslAuthenticate before SaslHandshake")
				_ = c.write(req, resp)
				return auth.Principal{}, nil, fmt.Errorf("%w: SaslAuthenticate before SaslHandshake", errSASL)
			}
			reply, done, stepErr := server.Step(r.SASLAuthBytes)
			if stepErr != nil {
				resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
				resp.ErrorMessage = kmsg.StringPtr(failureMessage(mechanism, stepErr))
				_ = c.write(req, resp)
				return auth.Principal{}, nil, fmt.Errorf("%w: %s: %w", errSASL, mechanism, stepErr)
			}
			resp.SASLAuthBytes = reply
			if err := c.write(req, resp); err != nil {
				return auth.Principal{}, nil, err
			}
			if done {
				p, err := principalOf(server, mechanism)
				return p, nil, err
			}
		default:
			req.account.Release()
			return auth.Principal{}, nil, fmt.Errorf("%w: %s before authenticating", errSASL, kmsg.NameForKey(req.key))
		}
	}
}

// rawSASL runs the rest of an exchange begun by a v0 SaslHandshake: raw
// tokens both ways.
func (c *conn) rawSASL(server saslServer, mechanism string) (auth.Principal, error) {
	for {
		token, err := c.readToken()
		if err != nil {
			return auth.Principal{}, err
		}
		reply, done, err := server.Step(token)
		if err != nil {
			return auth.Principal{}, fmt.Errorf("%w: %s: %w", errSASL, mechanism, err)
		}
		c.reply = binary.BigEndian.AppendUint32(c.reply[:0], uint32(len(reply)))
		c.reply = append(c.reply, reply...)
		if err := c.writeBytes(c.reply); err != nil {
			return auth.Principal{}, err
		}
		if done {
			return principalOf(server, mechanism)
		}
	}
}

// readToken reads one raw SASL token.
func (c *conn) readToken() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IdleTimeout))
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(sizeBuf[:])
	if size > maxSASLToken {
		return nil, fmt.Errorf("%w: a SASL token of %d bytes, at most %d", errFrame, size, maxSASLToken)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IOTimeout))
	token := make([]byte, size)
	if _, err := io.ReadFull(c.br, token); err != nil {
		return nil, err
	}
	return token, nil
}

func principalOf(server saslServer, mechanism string) (auth.Principal, error) {
	p, ok := server.Principal()
	if !ok {
		return auth.Principal{}, fmt.Errorf("%w: %s exchange ended without a principal", errSASL, mechanism)
	}
	return p, nil
}

// failureMessage is SaslAuthenticate's error message: Kafka's words for
// a wrong password or an unknown user alike, and what was malformed
// otherwise (which says nothing about the user either).
func failureMessage(mechanism string, err error) string {
	if errors.Is(err, auth.ErrAuthenticationFailed) {
		return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
	}
	return "Authentication failed: " + err.Error()
}

func (c *conn) newSASLServer(mechanism string) saslServer {
	if mechanism == mechanismPlain {
		return &plainServer{users: c.s.opts.Users, passwords: &c.s.passwords}
	}
	return auth.NewScramServer(c.s.opts.Users)
}

// plainServer checks a SASL PLAIN message (RFC 4616: authzid NUL authcid
// NUL password) against the user's SCRAM credential. It is offered only
// over TLS.
type plainServer struct {
	users     func(string) *auth.User
	passwords *auth.PasswordCache
	user      string
	done      bool
}

// decoyCredential stands in for the credential of a user that does not
// exist, so that a PLAIN login costs the same either way.
var decoyCredential, _ = auth.DeriveCredential("", make([]byte, 32), auth.MinIterations)

func (p *plainServer) Step(msg []byte) ([]byte, bool, error) {
	if p.done {
		return nil, true, fmt.Errorf("%w: the exchange is over", auth.ErrBadSASLMessage)
	}
	p.done = true
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 || len(msg) > maxSASLToken {
		return nil, true, fmt.Errorf("%w: want authzid NUL user NUL password", auth.ErrBadSASLMessage)
	}
	authzid, user, password := string(parts[0]), string(parts[1]), string(parts[2])
	if authzid != "" && authzid != user {
		return nil, true, fmt.Errorf("%w: authorization id %q is not the user", auth.ErrBadSASLMessage, authzid)
	}
	u := p.users(user)
	if u == nil || u.SCRAM == nil {
		decoyCredential.Verify(password)
		return nil, true, auth.ErrAuthenticationFailed
	}
	if !p.passwords.Verify(u, password) {
		return nil, true, auth.ErrAuthenticationFailed
	}
	p.user = user
	return []byte{}, true, nil
}

func (p *plainServer) Principal() (auth.Principal, bool) {
	if p.user == "" {
		return auth.Principal{}, false
	}
	return auth.Principal{Name: p.user}, true
}
