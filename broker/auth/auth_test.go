package auth

import (
	"bytes"
	"errors"
	"testing"
)

func TestAllowed(t *testing.T) {
	orders := Need{ResourceTopic, "orders", OpWrite}
	readOrders := Need{ResourceTopic, "orders", OpRead}
	describeOrders := Need{ResourceTopic, "orders", OpDescribe}
	user := func(acls ...ACL) *User { return &User{Name: "alice", ACLs: acls} }
	alice := Principal{Name: "alice"}
	for _, tc := range []struct {
		name string
		p    Principal
		user *User
		host string
		need Need
		want bool
	}{
		{"no rules", alice, user(), "", orders, false},
		{"anonymous", Principal{}, user(ACL{Resource: ResourceTopic, Name: "*", Operations: []Operation{OpAll}}), "", orders, false},
		{"operator", Principal{Operator: true}, nil, "", orders, true},
		{"superuser without a record", Principal{Name: "root"}, nil, "", orders, true},
		{"deleted user", alice, nil, "", orders, false},
		{"literal allow", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpWrite}}), "", orders, true},
		{"literal other name", alice, user(ACL{Resource: ResourceTopic, Name: "orders2", Operations: []Operation{OpWrite}}), "", orders, false},
		{"wildcard", alice, user(ACL{Resource: ResourceTopic, Name: "*", Operations: []Operation{OpWrite}}), "", orders, true},
		{"prefix", alice, user(ACL{Resource: ResourceTopic, Name: "ord", Pattern: PatternPrefix, Operations: []Operation{OpWrite}}), "", orders, true},
		{"prefix is not literal", alice, user(ACL{Resource: ResourceTopic, Name: "ord", Operations: []Operation{OpWrite}}), "", orders, false},
		{"read is not write", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpRead}}), "", orders, false},
		{"read allows read", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpRead}}), "", readOrders, true},
		{"read implies describe", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpRead}}), "", describeOrders, true},
		{"all", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpAll}}), "", orders, true},
		{"group rule is not a topic rule", alice, user(ACL{Resource: ResourceGroup, Name: "orders", Operations: []Operation{OpAll}}), "", orders, false},
		{"deny wins", alice, user(
			ACL{Resource: ResourceTopic, Name: "*", Operations: []Operation{OpAll}},
			ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpWrite}, Permission: Deny}), "", orders, false},
		{"deny of write leaves describe", alice, user(
			ACL{Resource: ResourceTopic, Name: "*", Operations: []Operation{OpAll}},
			ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpWrite}, Permission: Deny}), "", describeOrders, true},
		{"host matches", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpWrite}, Host: "10.0.0.1"}), "10.0.0.1", orders, true},
		{"host differs", alice, user(ACL{Resource: ResourceTopic, Name: "orders", Operations: []Operation{OpWrite}, Host: "10.0.0.1"}), "10.0.0.2", orders, false},
		{"cluster rule", alice, user(ACL{Resource: ResourceCluster, Operations: []Operation{OpCreate}}), "", Need{ResourceCluster, "", OpCreate}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Authorizer{SuperUsers: []string{"root"}}
			if got := a.Allowed(tc.p, tc.user, tc.host, tc.need); got != tc.want {
				t.Errorf("Allowed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestACLValidate(t *testing.T) {
	for _, tc := range []struct {
		acl ACL
		ok  bool
	}{
		{ACL{Resource: ResourceTopic, Name: "t", Operations: []Operation{OpRead, OpWrite}}, true},
		{ACL{Resource: ResourceGroup, Name: "g", Operations: []Operation{OpRead}}, true},
		{ACL{Resource: ResourceCluster, Operations: []Operation{OpCreate}}, true},
		{ACL{Resource: ResourceGroup, Name: "g", Operations: []Operation{OpWrite}}, false},
		{ACL{Resource: ResourceCluster, Operations: []Operation{OpRead}}, false},
		{ACL{Resource: ResourceTopic, Operations: []Operation{OpRead}}, false},
		{ACL{Resource: "schema", Name: "s", Operations: []Operation{OpRead}}, false},
		{ACL{Resource: ResourceTopic, Name: "t"}, false},
		{ACL{Resource: ResourceTopic, Name: "t", Operations: []Operation{OpRead}, Pattern: "glob"}, false},
		{ACL{Resource: ResourceTopic, Name: "t", Operations: []Operation{OpRead}, Permission: "maybe"}, false},
	} {
		if err := tc.acl.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate = %v, want ok=%v", tc.acl, err, tc.ok)
		}
	}
}

func TestCredential(t *testing.T) {
	c, err := NewCredential("s3cret", MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.Verify("s3cret") {
		t.Error("the password does not verify")
	}
	for _, wrong := range []string{"", "s3cre", "s3cret ", "S3cret", "s3cret\x00", "s3cret\x00\x00"} {
		if c.Verify(wrong) {
			t.Errorf("%q verifies", wrong)
		}
	}
	if bytes.Contains(c.StoredKey, []byte("s3cret")) || bytes.Contains(c.ServerKey, []byte("s3cret")) {
		t.Error("the credential holds the password")
	}
	again, err := DeriveCredential("s3cret", c.Salt, c.Iterations)
	if err != nil || !bytes.Equal(again.StoredKey, c.StoredKey) || !bytes.Equal(again.ServerKey, c.ServerKey) {
		t.Errorf("deriving again gives another credential: %v", err)
	}
	if _, err := NewCredential("pw\x00", MinIterations); !errors.Is(err, ErrBadCredential) {
		t.Errorf("a password with NUL: %v, want ErrBadCredential", err)
	}
	other, _ := NewCredential("s3cret", MinIterations)
	if bytes.Equal(other.StoredKey, c.StoredKey) {
		t.Error("two credentials of one password share a salt")
	}
	for _, bad := range []Credential{
		{Salt: c.Salt, Iterations: 1, StoredKey: c.StoredKey, ServerKey: c.ServerKey},
		{Salt: c.Salt, Iterations: MaxIterations + 1, StoredKey: c.StoredKey, ServerKey: c.ServerKey},
		{Iterations: c.Iterations, StoredKey: c.StoredKey, ServerKey: c.ServerKey},
		{Salt: c.Salt, Iterations: c.Iterations, StoredKey: c.StoredKey[:10], ServerKey: c.ServerKey},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrBadCredential) {
			t.Errorf("Validate(%+v) = %v, want ErrBadCredential", bad, err)
		}
		if bad.Verify("s3cret") {
			t.Errorf("a bad credential verifies: %+v", bad)
		}
	}
}

func TestPasswordCache(t *testing.T) {
	c, err := NewCredential("pw", MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	u := &User{Name: "alice", SCRAM: &c}
	var cache PasswordCache
	for range 2 { // the second round answers from the cache
		if !cache.Verify(u, "pw") || cache.Verify(u, "other") {
			t.Fatal("cache answers wrong")
		}
	}
	changed, _ := NewCredential("new", MinIterations)
	if cache.Verify(&User{Name: "alice", SCRAM: &changed}, "pw") {
		t.Error("the old password verifies against a changed credential")
	}
	if cache.Verify(&User{Name: "alice"}, "pw") || cache.Verify(nil, "pw") {
		t.Error("a user without a credential verifies")
	}
}

// FuzzVerify: any credential and password is an answer, never a panic.
func FuzzVerify(f *testing.F) {
	c, _ := NewCredential("pw", MinIterations)
	f.Add(c.Salt, MinIterations, c.StoredKey, c.ServerKey, "pw")
	f.Add([]byte{}, 0, []byte{}, []byte{}, "")
	f.Fuzz(func(t *testing.T, salt []byte, iterations int, stored, server []byte, password string) {
		if iterations > MinIterations { // keep each run fast
			iterations = MinIterations
		}
		cred := Credential{Salt: salt, Iterations: iterations, StoredKey: stored, ServerKey: server}
		if cred.Verify(password) && cred.Validate() != nil {
			t.Fatal("an invalid credential verified")
		}
	})
}
