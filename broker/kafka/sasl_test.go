package kafka

import (
	"context"
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kairolog/kairolog/broker/auth"
)

// saslUsers are the users of the SASL tests: alice with a password, carol
// with none (a certificate user).
func saslUsers(t testing.TB) func(string) *auth.User {
	t.Helper()
	cred, err := auth.NewCredential("alice-pw", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*auth.User{"alice": {Name: "alice", SCRAM: &cred}, "carol": {Name: "carol"}}
	return func(name string) *auth.User { return users[name] }
}

func startSASLServer(t *testing.T) string {
	t.Helper()
	_, addr := startServer(t, Options{Security: auth.Listener{Authentication: auth.AuthSCRAM}, Users: saslUsers(t)})
	return addr
}

func handshake(c *rawClient, version int16, mechanism string) *kmsg.SASLHandshakeResponse {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = version, mechanism
	return c.roundTrip(req).(*kmsg.SASLHandshakeResponse)
}

func saslAuthenticate(c *rawClient, msg []byte) *kmsg.SASLAuthenticateResponse {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 2, msg
	return c.roundTrip(req).(*kmsg.SASLAuthenticateResponse)
}

// scramLogin runs franz-go's SCRAM-SHA-512 client over SaslAuthenticate
// and returns the error code and message of the step that ended it.
func scramLogin(t *testing.T, c *rawClient, user, password string) (int16, string) {
	t.Helper()
	if resp := handshake(c, 1, auth.Mechanism); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	session, msg, err := scram.Auth{User: user, Pass: password}.AsSha512Mechanism().Authenticate(context.Background(), "broker")
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp := saslAuthenticate(c, msg)
		if resp.ErrorCode != 0 {
			return resp.ErrorCode, *resp.ErrorMessage
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			t.Fatalf("the client refused the server's message: %v", err)
		}
		if done {
			return 0, ""
		}
		msg = next
	}
}

// apiVersionsAnswered reports whether the connection answers a request
// past authentication.
func apiVersionsAnswered(c *rawClient) bool {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.22.3"
	return c.roundTrip(req).(*kmsg.ApiVersionsResponse).ErrorCode == 0
}

// TestSASLSCRAM: franz-go's SCRAM-SHA-512 client logs in over
// SaslHandshake v1 and SaslAuthenticate; then requests run, and another
// handshake is ILLEGAL_SASL_STATE. A wrong password and an unknown user
// fail alike, with SASL_AUTHENTICATION_FAILED and one message, and
// disconnect.
func TestSASLSCRAM(t *testing.T) {
	addr := startSASLServer(t)
	c := dialRaw(t, addr)
	if !apiVersionsAnswered(c) {
		t.Fatal("ApiVersions before authenticating is not answered")
	}
	if code, msg := scramLogin(t, c, "alice", "alice-pw"); code != 0 {
		t.Fatalf("alice's login: %v %s", kerr.ErrorForCode(code), msg)
	}
	if !apiVersionsAnswered(c) {
		t.Fatal("ApiVersions after authenticating is not answered")
	}
	if resp := handshake(c, 1, auth.Mechanism); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("a handshake after authenticating: %v, want ILLEGAL_SASL_STATE", kerr.ErrorForCode(resp.ErrorCode))
	}

	var messages []string
	for _, login := range []struct{ user, password string }{{"alice", "wrong"}, {"mallory", "alice-pw"}, {"carol", "x"}} {
		c := dialRaw(t, addr)
		code, msg := scramLogin(t, c, login.user, login.password)
		if code != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("%s/%s: %v, want SASL_AUTHENTICATION_FAILED", login.user, login.password, kerr.ErrorForCode(code))
		}
		if !c.closedByPeer() {
			t.Errorf("%s: the connection stayed open after a failed authentication", login.user)
		}
		messages = append(messages, msg)
	}
	if messages[0] != messages[1] || messages[1] != messages[2] || !strings.Contains(messages[0], "SCRAM-SHA-512") {
		t.Errorf("failure messages differ by user, or name no mechanism: %q", messages)
	}
}

// TestSASLStateErrors: what a client may not do while authenticating —
// any other request first, PLAIN without TLS, an unknown mechanism,
// SaslAuthenticate before a handshake, a second handshake — is answered
// as Kafka answers it (or not at all) and disconnects.
func TestSASLStateErrors(t *testing.T) {
	addr := startSASLServer(t)
	for _, tc := range []struct {
		name string
		run  func(c *rawClient) int16 // the error code answered, -1 for none
		want int16
	}{
		{"Metadata first", func(c *rawClient) int16 {
			c.send(kmsg.NewPtrMetadataRequest())
			return -1
		}, -1},
		{"PLAIN without TLS", func(c *rawClient) int16 {
			resp := handshake(c, 1, "PLAIN")
			if len(resp.SupportedMechanisms) != 1 || resp.SupportedMechanisms[0] != auth.Mechanism {
				t.Errorf("mechanisms without TLS: %v", resp.SupportedMechanisms)
			}
			return resp.ErrorCode
		}, kerr.UnsupportedSaslMechanism.Code},
		{"GSSAPI", func(c *rawClient) int16 { return handshake(c, 1, "GSSAPI").ErrorCode }, kerr.UnsupportedSaslMechanism.Code},
		{"SaslAuthenticate first", func(c *rawClient) int16 {
			return saslAuthenticate(c, []byte("n,,n=alice,r=abc")).ErrorCode
		}, kerr.IllegalSaslState.Code},
		{"two handshakes", func(c *rawClient) int16 {
			if code := handshake(c, 1, auth.Mechanism).ErrorCode; code != 0 {
				t.Fatalf("first handshake: %v", kerr.ErrorForCode(code))
			}
			return handshake(c, 1, auth.Mechanism).ErrorCode
		}, kerr.IllegalSaslState.Code},
		{"a malformed first message", func(c *rawClient) int16 {
			handshake(c, 1, auth.Mechanism)
			return saslAuthenticate(c, []byte("garbage")).ErrorCode
		}, kerr.SaslAuthenticationFailed.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			if got := tc.run(c); got != tc.want {
				t.Fatalf("error %v, want %v", kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
			}
			if !c.closedByPeer() {
				t.Fatal("the connection stayed open")
			}
		})
	}
}

// TestSASLHandshakeV0RawTokens: after a v0 handshake the SCRAM messages
// travel as raw size-prefixed tokens, as librdkafka sends them to a broker
// without SaslAuthenticate; then requests run. A wrong proof closes the
// connection, the one answer that framing has.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	addr := startSASLServer(t)
	for _, tc := range []struct {
		password string
		ok       bool
	}{{"alice-pw", true}, {"wrong", false}} {
		c := dialRaw(t, addr)
		if resp := handshake(c, 0, auth.Mechanism); resp.ErrorCode != 0 {
			t.Fatalf("v0 handshake: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		session, msg, err := scram.Auth{User: "alice", Pass: tc.password}.AsSha512Mechanism().Authenticate(context.Background(), "broker")
		if err != nil {
			t.Fatal(err)
		}
		failed := false
		for done := false; !done; {
			c.write(binary.BigEndian.AppendUint32(nil, uint32(len(msg))))
			c.write(msg)
			_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			var size [4]byte
			if _, err := io.ReadFull(c.conn, size[:]); err != nil {
				failed = true
				break
			}
			reply := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(c.conn, reply); err != nil {
				t.Fatal(err)
			}
			if done, msg, err = session.Challenge(reply); err != nil {
				t.Fatalf("the client refused the server's token: %v", err)
			}
		}
		if failed == tc.ok {
			t.Fatalf("password %q: failed %v", tc.password, failed)
		}
		if tc.ok && !apiVersionsAnswered(c) {
			t.Fatal("ApiVersions after a raw-token login is not answered")
		}
	}
}

// startOpenServer serves a listener without authentication, with
// authorization on, so that what a connection may see says who it is:
// alice may read groups starting with "mine-".
func startOpenServer(t *testing.T) string {
	t.Helper()
	cred, err := auth.NewCredential("alice-pw", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	alice := &auth.User{Name: "alice", SCRAM: &cred, ACLs: []auth.ACL{
		{Resource: auth.ResourceGroup, Name: "mine-", Pattern: auth.PatternPrefix, Operations: []auth.Operation{auth.OpRead}}}}
	users := func(name string) *auth.User {
		if name == "alice" {
			return alice
		}
		return nil
	}
	_, addr := startServer(t, Options{Core: &recordingCore{}, Users: users,
		Security: auth.Listener{Authentication: auth.AuthNone, Authorization: true, Authorizer: auth.Authorizer{SuperUsers: []string{"root"}}}})
	return addr
}

// listedGroups are the groups ListGroups shows the connection.
func listedGroups(t *testing.T, c *rawClient) []string {
	t.Helper()
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 4
	resp := c.roundTrip(req).(*kmsg.ListGroupsResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("ListGroups: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	groups := []string{}
	for _, g := range resp.Groups {
		groups = append(groups, g.Group)
	}
	return groups
}

// TestSASLOfferedOnOpenListener: a listener without authentication takes
// a SCRAM-SHA-512 login the client offers before any other request, and
// the connection then carries the user (alice sees her groups, which an
// anonymous connection does not); a wrong password, an unknown user and
// PLAIN without TLS fail as on a SCRAM listener and disconnect, never
// falling back to anonymous. A client that offers no login stays
// anonymous, and a handshake after another request, or SaslAuthenticate
// without one, is ILLEGAL_SASL_STATE on a connection that goes on.
func TestSASLOfferedOnOpenListener(t *testing.T) {
	addr := startOpenServer(t)
	for _, tc := range []struct {
		name string
		// login is what the client offers: the error code it ended with,
		// -1 for none offered.
		login  func(t *testing.T, c *rawClient) int16
		want   int16
		groups []string // seen afterwards, when the connection goes on
	}{
		{"alice", func(t *testing.T, c *rawClient) int16 {
			code, _ := scramLogin(t, c, "alice", "alice-pw")
			return code
		}, 0, []string{"mine-1"}},
		{"a wrong password", func(t *testing.T, c *rawClient) int16 {
			code, _ := scramLogin(t, c, "alice", "wrong")
			return code
		}, kerr.SaslAuthenticationFailed.Code, nil},
		{"an unknown user", func(t *testing.T, c *rawClient) int16 {
			code, _ := scramLogin(t, c, "mallory", "alice-pw")
			return code
		}, kerr.SaslAuthenticationFailed.Code, nil},
		{"PLAIN without TLS", func(t *testing.T, c *rawClient) int16 {
			return handshake(c, 1, "PLAIN").ErrorCode
		}, kerr.UnsupportedSaslMechanism.Code, nil},
		{"none", func(t *testing.T, c *rawClient) int16 { return -1 }, -1, []string{}},
		{"SaslAuthenticate first", func(t *testing.T, c *rawClient) int16 {
			return saslAuthenticate(c, []byte("n,,n=alice,r=abc")).ErrorCode
		}, kerr.IllegalSaslState.Code, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			if !apiVersionsAnswered(c) {
				t.Fatal("ApiVersions is not answered")
			}
			if got := tc.login(t, c); got != tc.want {
				t.Fatalf("login: %v, want %v", kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
			}
			if tc.groups == nil {
				if !c.closedByPeer() {
					t.Fatal("the connection stayed open after a failed login")
				}
				return
			}
			if got := listedGroups(t, c); !slices.Equal(got, tc.groups) {
				t.Errorf("groups %v, want %v", got, tc.groups)
			}
			if code := handshake(c, 1, auth.Mechanism).ErrorCode; code != kerr.IllegalSaslState.Code {
				t.Errorf("a later SaslHandshake: %v, want ILLEGAL_SASL_STATE", kerr.ErrorForCode(code))
			}
			if code := saslAuthenticate(c, []byte("x")).ErrorCode; code != kerr.IllegalSaslState.Code {
				t.Errorf("a later SaslAuthenticate: %v, want ILLEGAL_SASL_STATE", kerr.ErrorForCode(code))
			}
			if !apiVersionsAnswered(c) {
				t.Error("the connection did not go on")
			}
		})
	}
}
