package cluster

import (
	"context"

	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

var (
	opPutUser    = defineOp("put-user", (*Node).putUser)
	opDeleteUser = defineOp("delete-user", (*Node).deleteUser)
)

// PutUser creates or replaces a user: its SCRAM credential and ACLs. It
// returns once every live broker applies it, so a revoked right is
// revoked everywhere when it returns.
func (n *Node) PutUser(ctx context.Context, u auth.User) error {
	_, err := opPutUser.call(n, ctx, u)
	return err
}

// DeleteUser removes a user (no error if there is none), once every live
// broker has forgotten it.
func (n *Node) DeleteUser(ctx context.Context, name string) error {
	_, err := opDeleteUser.call(n, ctx, metadata.UserRef{Name: name})
	return err
}

func (n *Node) putUser(ctx context.Context, u auth.User) (Empty, error) {
	if _, err := n.controller(); err != nil {
		return Empty{}, err
	}
	if err := metadata.ValidateUser(u); err != nil {
		return Empty{}, err
	}
	if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdPutUser, PutUser: &u}); err != nil {
		return Empty{}, err
	}
	return Empty{}, n.awaitEveryBroker(ctx, n.Image().Index)
}

func (n *Node) deleteUser(ctx context.Context, ref metadata.UserRef) (Empty, error) {
	if _, err := n.controller(); err != nil {
		return Empty{}, err
	}
	if _, err := n.apply(ctx, metadata.Command{Type: metadata.CmdDeleteUser, DeleteUser: &ref}); err != nil {
		return Empty{}, err
	}
	return Empty{}, n.awaitEveryBroker(ctx, n.Image().Index)
}
