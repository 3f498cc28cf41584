package auth

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// User is a user as the metadata quorum holds it: its name (the
// principal), its SCRAM credential if it logs in with a password, and its
// ACL rules. A user with a client certificate has no credential: the
// cluster CA vouches for its name.
type User struct {
	Name  string      `json:"name"`
	SCRAM *Credential `json:"scram,omitempty"`
	ACLs  []ACL       `json:"acls,omitempty"`
}

// ErrInvalidUser is a user the brokers refuse to store.
var ErrInvalidUser = errors.New("invalid user")

// Bounds of a user: a name is a Kubernetes object name, as a KairoUser's
// is; the rules are as many as the KairoUser CRD allows.
const (
	maxUserName = 253
	maxUserACLs = 256
)

// Validate refuses a user the authorizer could not use: no name or one
// too long, a credential that was not derived as SCRAM-SHA-512 derives
// one, or a rule that does not read.
func (u User) Validate() error {
	if u.Name == "" || len(u.Name) > maxUserName {
		return fmt.Errorf("%w: a name of 1 to %d bytes", ErrInvalidUser, maxUserName)
	}
	if u.SCRAM != nil {
		if err := u.SCRAM.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidUser, u.Name, err)
		}
	}
	if len(u.ACLs) > maxUserACLs {
		return fmt.Errorf("%w: %s has %d rules, at most %d", ErrInvalidUser, u.Name, len(u.ACLs), maxUserACLs)
	}
	for i, acl := range u.ACLs {
		if err := acl.Validate(); err != nil {
			return fmt.Errorf("%w: %s, rule %d: %w", ErrInvalidUser, u.Name, i, err)
		}
	}
	return nil
}

// Principal is who made a request. The zero Principal is anonymous.
type Principal struct {
	// Name is the user's name; empty for an anonymous request.
	Name string
	// Operator is the operator, by its certificate: a superuser whatever
	// the superuser list says, so authorization cannot lock it out.
	Operator bool
}

// Anonymous reports whether nobody authenticated.
func (p Principal) Anonymous() bool { return p.Name == "" && !p.Operator }

func (p Principal) String() string {
	switch {
	case p.Operator:
		return "the operator"
	case p.Name == "":
		return "anonymous"
	}
	return "user " + p.Name
}

// Need is one permission a request needs.
type Need struct {
	Resource ResourceType
	Name     string
	Op       Operation
}

// Authorizer decides requests against the users' ACLs.
type Authorizer struct {
	// SuperUsers may do anything.
	SuperUsers []string
}

// Allowed reports whether p, coming from host, may do need. user is p's
// user record (nil when there is none, such as a user deleted since it
// logged in). Superusers and the operator may do anything; anyone else
// needs a rule that allows need and none that denies it.
func (a Authorizer) Allowed(p Principal, user *User, host string, need Need) bool {
	if p.Operator || (p.Name != "" && slices.Contains(a.SuperUsers, p.Name)) {
		return true
	}
	if p.Anonymous() || user == nil {
		return false
	}
	allowed := false
	for _, acl := range user.ACLs {
		if !acl.matches(need.Resource, need.Name, need.Op, host) {
			continue
		}
		if acl.Permission == Deny {
			return false
		}
		allowed = true
	}
	return allowed
}

// PasswordCache remembers passwords that verified against a credential,
// so that HTTP Basic, which sends the password with every request, does
// not cost a PBKDF2 of thousands of iterations each time. It holds
// digests, not passwords, and forgets everything when full; a changed
// credential (another StoredKey) misses.
type PasswordCache struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]struct{}
}

// maxCachedPasswords bounds a PasswordCache's memory.
const maxCachedPasswords = 4096

// Verify reports whether password is user's.
func (c *PasswordCache) Verify(user *User, password string) bool {
	if user == nil || user.SCRAM == nil {
		return false
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(user.Name), []byte(password), user.SCRAM.Salt, user.SCRAM.StoredKey} {
		h.Write([]byte{byte(len(part) >> 24), byte(len(part) >> 16), byte(len(part) >> 8), byte(len(part))})
		h.Write(part)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	_, hit := c.seen[key]
	c.mu.Unlock()
	if hit {
		return true
	}
	if !user.SCRAM.Verify(password) {
		return false
	}
	c.mu.Lock()
	if c.seen == nil || len(c.seen) >= maxCachedPasswords {
		c.seen = map[[sha256.Size]byte]struct{}{}
	}
	c.seen[key] = struct{}{}
	c.mu.Unlock()
	return true
}
