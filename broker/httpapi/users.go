package httpapi

import (
	"context"
	"net/http"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// The users of the cluster (docs/api.md#users): the operator writes every
// KairoUser here; the metadata quorum keeps them. A password sent here is
// turned into a SCRAM-SHA-512 credential at once and never stored.

func (s *Server) userRoutes() {
	s.handle("GET /users", "list_users", kindAdmin, endpoint(s, none, withoutRequest(s.b.Users),
		ok(func(_ struct{}, users []*auth.User) any {
			views := make([]userView, 0, len(users))
			for _, u := range users {
				views = append(views, viewOf(u))
			}
			return map[string][]userView{"users": views}
		})))
	s.handle("GET /users/{name}", "describe_user", kindAdmin, endpoint(s, pathValue("name"),
		func(_ context.Context, name string) (userView, error) {
			u := s.b.User(name)
			if u == nil {
				return userView{}, api.Errorf(api.CodeNotFound, "user %q does not exist", name)
			}
			return viewOf(u), nil
		}, result))
	s.handle("PUT /users/{name}", "put_user", kindAdmin, endpoint(s, fromBody[auth.User, putUserBody],
		func(ctx context.Context, u auth.User) (string, error) {
			status := "updated"
			if s.b.User(u.Name) == nil {
				status = "created"
			}
			return status, s.b.PutUser(ctx, u)
		},
		ok(func(u auth.User, status string) any { return withStatus{status, viewOf(&u)} })))
	s.handle("DELETE /users/{name}", "delete_user", kindAdmin, endpoint(s, pathValue("name"), noResult(s.b.DeleteUser),
		ok(func(name string, _ struct{}) any { return withStatus{"deleted", map[string]string{"name": name}} })))
}

// userView is a user as the API shows it: never its credential's keys.
// The salt and iteration count are what a SCRAM exchange tells anyone
// who names the user; with them a writer (the operator) can tell whether
// the brokers hold the credential it derived.
type userView struct {
	Name       string     `json:"name"`
	Mechanisms []string   `json:"mechanisms"`
	SCRAM      *scramView `json:"scram,omitempty"`
	ACLs       []auth.ACL `json:"acls"`
}

// scramView is the public part of a SCRAM credential.
type scramView struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
}

func viewOf(u *auth.User) userView {
	v := userView{Name: u.Name, Mechanisms: []string{}, ACLs: u.ACLs}
	if u.SCRAM != nil {
		v.Mechanisms = append(v.Mechanisms, auth.Mechanism)
		v.SCRAM = &scramView{Salt: u.SCRAM.Salt, Iterations: u.SCRAM.Iterations}
	}
	if v.ACLs == nil {
		v.ACLs = []auth.ACL{}
	}
	return v
}

// putUserBody is a user: a password or a SCRAM credential derived from
// one (salt and keys in base64), or neither for a user who logs in with
// a client certificate; and its ACL rules.
type putUserBody struct {
	Password *string          `json:"password"`
	SCRAM    *auth.Credential `json:"scram"`
	ACLs     []auth.ACL       `json:"acls"`
}

func (b *putUserBody) request(r *http.Request) (auth.User, error) {
	u := auth.User{Name: r.PathValue("name"), SCRAM: b.SCRAM, ACLs: b.ACLs}
	if b.Password != nil {
		if b.SCRAM != nil {
			return u, invalid("give password or scram, not both")
		}
		if *b.Password == "" {
			return u, invalid("password must not be empty")
		}
		cred, err := auth.NewCredential(*b.Password, auth.MinIterations)
		if err != nil {
			return u, invalid("password: %v", err)
		}
		u.SCRAM = &cred
	}
	if err := u.Validate(); err != nil {
		return u, invalid("%v", err)
	}
	return u, nil
}
