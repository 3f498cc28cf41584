package metadata

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/kairolog/kairolog/broker/auth"
)

// TestUsers: users are put, replaced and deleted through the log, bad
// ones are refused with the image unchanged, and a snapshot (the image
// as JSON) keeps them with their credentials.
func TestUsers(t *testing.T) {
	cred, err := auth.NewCredential("pw", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	readOrders := []auth.ACL{{Resource: auth.ResourceTopic, Name: "orders", Operations: []auth.Operation{auth.OpRead}}}
	put := func(u auth.User) Command { return Command{Type: CmdPutUser, PutUser: &u} }
	b := newBuilder(t)
	b.do(put(auth.User{Name: "alice", SCRAM: &cred, ACLs: readOrders}))
	b.do(put(auth.User{Name: "carol"}))
	if u := b.img.User("alice"); u == nil || !u.SCRAM.Verify("pw") || len(u.ACLs) != 1 {
		t.Fatalf("alice = %+v", u)
	}

	for name, bad := range map[string]auth.User{
		"no name":        {},
		"bad rule":       {Name: "bob", ACLs: []auth.ACL{{Resource: auth.ResourceGroup, Name: "g", Operations: []auth.Operation{auth.OpWrite}}}},
		"bad credential": {Name: "bob", SCRAM: &auth.Credential{Salt: []byte("s"), Iterations: 1}},
	} {
		t.Run(name, func(t *testing.T) { b.expect(put(bad), ErrInvalidUser) })
	}

	var back Image
	raw, err := json.Marshal(b.img)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if u := back.User("alice"); u == nil || !u.SCRAM.Verify("pw") || u.ACLs[0].Name != "orders" {
		t.Fatalf("alice after a snapshot = %+v", u)
	}

	before := b.img
	b.do(Command{Type: CmdDeleteUser, DeleteUser: &UserRef{Name: "alice"}})
	if b.img.User("alice") != nil || before.User("alice") == nil {
		t.Fatal("delete did not remove alice from the new image only")
	}
	b.do(Command{Type: CmdDeleteUser, DeleteUser: &UserRef{Name: "alice"}}) // again: nothing to do
	if err := b.try(Command{Type: CmdPutUser}); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("put_user without payload: %v", err)
	}
}
