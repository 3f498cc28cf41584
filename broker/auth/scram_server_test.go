package auth

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// exchange runs franz-go's SCRAM-SHA-512 client, as a Kafka client uses it,
// against a ScramServer, and returns the server's principal, the server's
// error and the client's.
func exchange(t *testing.T, users map[string]*User, name, password string) (Principal, bool, error, error) {
	t.Helper()
	mech := scram.Auth{User: name, Pass: password}.AsSha512Mechanism()
	session, first, err := mech.Authenticate(context.Background(), "broker")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewScramServer(func(n string) *User { return users[n] })
	msg := first
	for {
		reply, done, serr := srv.Step(msg)
		if serr != nil {
			return Principal{}, false, serr, nil
		}
		clientDone, next, cerr := session.Challenge(reply)
		if cerr != nil {
			return Principal{}, false, nil, cerr
		}
		if done {
			if !clientDone {
				t.Fatal("the server finished before the client")
			}
			p, ok := srv.Principal()
			return p, ok, nil, nil
		}
		msg = next
	}
}

// TestScramServerWithAKafkaClient: franz-go's SCRAM client logs in with
// the right password and checks the server's signature; a wrong password
// and an unknown user both fail at the proof, the same way.
func TestScramServerWithAKafkaClient(t *testing.T) {
	cred, err := NewCredential("alice-pw", MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	commaCred, _ := NewCredential("pw", MinIterations)
	users := map[string]*User{
		"alice":    {Name: "alice", SCRAM: &cred},
		"a,b=c":    {Name: "a,b=c", SCRAM: &commaCred},
		"certonly": {Name: "certonly"},
	}
	for _, tc := range []struct {
		name, user, password string
		want                 error
	}{
		{"right password", "alice", "alice-pw", nil},
		{"escaped name", "a,b=c", "pw", nil},
		{"wrong password", "alice", "nope", ErrAuthenticationFailed},
		{"unknown user", "mallory", "alice-pw", ErrAuthenticationFailed},
		{"user without a password", "certonly", "guess", ErrAuthenticationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok, serr, cerr := exchange(t, users, tc.user, tc.password)
			if cerr != nil {
				t.Fatalf("the client refused the server: %v", cerr)
			}
			if !errors.Is(serr, tc.want) || (tc.want == nil) != ok {
				t.Fatalf("server: %v (authenticated %v), want %v", serr, ok, tc.want)
			}
			if ok && p.Name != tc.user {
				t.Errorf("principal %q, want %q", p.Name, tc.user)
			}
		})
	}
}

// TestScramServerRefusesBadMessages: malformed or replayed messages end
// the exchange with ErrBadSASLMessage, never a principal.
func TestScramServerRefusesBadMessages(t *testing.T) {
	cred, _ := NewCredential("pw", MinIterations)
	lookup := func(string) *User { return &User{Name: "alice", SCRAM: &cred} }
	for _, first := range []string{"", "n", "p=tls-unique,,n=alice,r=abc", "x,,n=alice,r=abc", "n,,r=abc,n=alice",
		"n,,n=al=ice,r=abc", "n,,n=,r=abc", "n,,n=alice,r=", "n,a=bob,n=alice,r=abc", strings.Repeat("n", maxSASLMessage+1)} {
		if _, _, err := NewScramServer(lookup).Step([]byte(first)); !errors.Is(err, ErrBadSASLMessage) {
			t.Errorf("first %q: %v, want ErrBadSASLMessage", first, err)
		}
	}
	s := NewScramServer(lookup)
	if _, _, err := s.Step([]byte("n,,n=alice,r=abc")); err != nil {
		t.Fatal(err)
	}
	for _, final := range []string{"c=biws,r=abc,p=AAAA", "c=biws,r=wrong,p=AAAA", "c=eSws,r=" + s.nonce + ",p=AAAA", "no proof"} {
		s2 := *s
		if _, _, err := s2.Step([]byte(final)); !errors.Is(err, ErrBadSASLMessage) {
			t.Errorf("final %q: %v, want ErrBadSASLMessage", final, err)
		}
		if _, ok := s2.Principal(); ok {
			t.Errorf("final %q authenticated", final)
		}
	}
	if _, _, err := s.Step([]byte("c=biws,r=" + s.nonce + ",p=" + strings.Repeat("A", 86) + "==")); !errors.Is(err, ErrAuthenticationFailed) {
		t.Errorf("a zero proof: %v, want ErrAuthenticationFailed", err)
	}
	if _, _, err := s.Step([]byte("again")); !errors.Is(err, ErrBadSASLMessage) {
		t.Errorf("a third message: %v", err)
	}
}

// FuzzScramServer: any pair of client messages ends in a reply or an
// error, never a panic, and never authenticates without the proof.
func FuzzScramServer(f *testing.F) {
	cred, _ := NewCredential("pw", MinIterations)
	lookup := func(n string) *User { return &User{Name: n, SCRAM: &cred} }
	f.Add("n,,n=alice,r=abc", "c=biws,r=abc,p=AAAA")
	f.Add("y,a=alice,n=alice,r=x", "c=eSxhPWFsaWNlLA==,r=x,p=")
	f.Add("n,,n=a=2Cb=3D,r=!", ",p=,p=")
	f.Fuzz(func(t *testing.T, first, final string) {
		s := NewScramServer(lookup)
		if _, done, err := s.Step([]byte(first)); err != nil || done {
			return
		}
		_, _, _ = s.Step([]byte(final))
		if _, ok := s.Principal(); ok {
			t.Fatalf("authenticated by %q, %q", first, final)
		}
	})
}

// TestScramServerLibrdkafkaNonce: librdkafka's client-final-message
// repeats its own nonce before the server's whole nonce (which already
// starts with it); Kafka accepts that, and so must the brokers, or kcat
// cannot log in. The proof is checked over the message as sent; a nonce
// that does not end with the server's is refused.
func TestScramServerLibrdkafkaNonce(t *testing.T) {
	cred, err := NewCredential("pw", MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*User{"alice": {Name: "alice", SCRAM: &cred}}
	for _, tc := range []struct {
		name   string
		nonce  func(client, server string) string
		wantOK bool
	}{
		{"as RFC 5802", func(_, server string) string { return server }, true},
		{"as librdkafka", func(client, server string) string { return client + server }, true},
		{"another nonce", func(client, _ string) string { return client + "forged" }, false},
	} {
		srv := NewScramServer(func(n string) *User { return users[n] })
		const clientNonce = `rd\kafka-nonce`
		bare := "n=alice,r=" + clientNonce
		first, _, err := srv.Step([]byte("n,," + bare))
		if err != nil {
			t.Fatal(err)
		}
		serverNonce := strings.TrimPrefix(strings.Split(string(first), ",")[0], "r=")
		withoutProof := "c=biws,r=" + tc.nonce(clientNonce, serverNonce)
		clientKey, _, err := keys("pw", cred.Salt, cred.Iterations)
		if err != nil {
			t.Fatal(err)
		}
		stored := sha512.Sum512(clientKey)
		signature := mac(stored[:], bare+","+string(first)+","+withoutProof)
		proof := make([]byte, len(clientKey))
		for i := range proof {
			proof[i] = clientKey[i] ^ signature[i]
		}
		_, _, err = srv.Step([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)))
		if _, ok := srv.Principal(); ok != tc.wantOK || (err == nil) != tc.wantOK {
			t.Errorf("%s: authenticated %v, %v", tc.name, ok, err)
		}
	}
}
