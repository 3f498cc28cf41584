package core

import (
	"context"
	"sort"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
)

// PutUser creates or replaces a user in the metadata quorum; it answers
// once every live broker knows the change.
func (b *Broker) PutUser(ctx context.Context, u auth.User) error {
	return apiError(b.node.PutUser(ctx, u))
}

// DeleteUser removes a user; a user that does not exist is NOT_FOUND.
func (b *Broker) DeleteUser(ctx context.Context, name string) error {
	if b.image().User(name) == nil {
		return api.Errorf(api.CodeNotFound, "user %q does not exist", name)
	}
	return apiError(b.node.DeleteUser(ctx, name))
}

// User is the user of that name as this broker's metadata holds it, or
// nil. The front doors authenticate and authorize against it.
func (b *Broker) User(name string) *auth.User { return b.image().User(name) }

// Users are every user, by name.
func (b *Broker) Users(ctx context.Context) ([]*auth.User, error) {
	img := b.image()
	out := make([]*auth.User, 0, len(img.Users))
	for _, u := range img.Users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
