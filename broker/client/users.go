package client

import (
	"context"
	"net/http"

	"github.com/kairolog/kairolog/broker/auth"
)

// User is a user as GET /users/{name} shows it: its mechanisms, the
// public part of its SCRAM credential, and its ACL rules.
type User struct {
	Name       string     `json:"name"`
	Mechanisms []string   `json:"mechanisms"`
	SCRAM      *SCRAMInfo `json:"scram,omitempty"`
	ACLs       []auth.ACL `json:"acls"`
}

// SCRAMInfo is the salt and iteration count of a user's credential.
type SCRAMInfo struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
}

// PutUserRequest is a user to create or replace: a salted SCRAM
// credential (or none, for a user with a client certificate) and its ACLs.
type PutUserRequest struct {
	SCRAM *auth.Credential `json:"scram,omitempty"`
	ACLs  []auth.ACL       `json:"acls"`
}

func userPath(name string) string { return "/users/" + esc(name) }

// User describes one user; NOT_FOUND when there is none.
func (c *Client) User(ctx context.Context, name string) (*User, error) {
	var out User
	return &out, c.call(ctx, http.MethodGet, userPath(name), nil, nil, &out, 0)
}

// PutUser creates or replaces a user; it returns once every live broker
// knows it.
func (c *Client) PutUser(ctx context.Context, name string, req PutUserRequest) error {
	if req.ACLs == nil {
		req.ACLs = []auth.ACL{}
	}
	return c.call(ctx, http.MethodPut, userPath(name), nil, req, nil, 0)
}

// DeleteUser removes a user; NOT_FOUND when there is none.
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, userPath(name), nil, nil, nil, 0)
}
