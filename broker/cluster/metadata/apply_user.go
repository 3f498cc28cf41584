package metadata

import (
	"fmt"

	"github.com/kairolog/kairolog/broker/auth"
)

// User returns the user of that name, or nil.
func (img *Image) User(name string) *auth.User { return img.Users[name] }

// ValidateUser refuses a user the authorizer could not use
// (auth.User.Validate) with ErrInvalidUser.
func ValidateUser(u auth.User) error {
	if err := u.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidUser, err)
	}
	return nil
}

// putUser creates or replaces a user.
func (img *Image) putUser(u auth.User) error {
	if err := ValidateUser(u); err != nil {
		return err
	}
	if img.Users == nil {
		img.Users = map[string]*auth.User{}
	}
	img.Users[u.Name] = &u
	return nil
}

// deleteUser removes a user; deleting one that does not exist changes
// nothing, so a retried delete succeeds.
func (img *Image) deleteUser(name string) error {
	delete(img.Users, name)
	return nil
}
