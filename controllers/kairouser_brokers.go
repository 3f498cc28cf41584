/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

// kairouser_brokers.go puts a KairoUser on its cluster's brokers: the
// salted SCRAM-SHA-512 credential derived from its password (never the
// password itself) or none for a certificate user, whose principal is its
// certificate's common name, the user's name; and its ACL rules. The
// brokers keep both in the metadata quorum.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/auth"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// SCRAMCredentialAnnotation on a scram-sha-512 user's Secret is the salted
// credential (RFC 5802: salt, iterations, StoredKey, ServerKey; JSON)
// derived from the Secret's password and given to the brokers. It is kept
// so that the same credential is compared and pushed every time, and
// derived again only when the password changes.
const SCRAMCredentialAnnotation = "kairolog.io/scram-sha-512"

// scramCredential is the credential of password: the one derived before
// (the old Secret's annotation) while the password is the same, else a new
// one with a fresh salt.
func scramCredential(password, oldPassword []byte, oldCredential string) (*auth.Credential, error) {
	if string(password) == string(oldPassword) && oldCredential != "" {
		var c auth.Credential
		if json.Unmarshal([]byte(oldCredential), &c) == nil && c.Validate() == nil {
			return &c, nil
		}
	}
	c, err := auth.NewCredential(string(password), auth.MinIterations)
	if err != nil {
		return nil, &userError{ReasonBrokerError, fmt.Sprintf("the password cannot be used: %v", err)}
	}
	return &c, nil
}

// brokerACLs are the user's rules as the brokers store them, the CRD's
// defaults spelled out so that what the brokers return compares equal.
func brokerACLs(u *kairov1alpha1.KairoUser) []auth.ACL {
	out := []auth.ACL{}
	if u.Spec.Authorization == nil {
		return out
	}
	for _, r := range u.Spec.Authorization.ACLs {
		a := auth.ACL{Resource: auth.ResourceType(r.Resource.Type), Name: r.Resource.Name,
			Pattern: r.Resource.PatternType, Permission: r.Type, Host: r.Host}
		for _, op := range r.Operations {
			a.Operations = append(a.Operations, auth.Operation(op))
		}
		out = append(out, normalACL(a))
	}
	return out
}

// normalACL fills in a rule's defaults: literal, allow, any host.
func normalACL(a auth.ACL) auth.ACL {
	if a.Pattern == "" {
		a.Pattern = auth.PatternLiteral
	}
	if a.Permission == "" {
		a.Permission = auth.Allow
	}
	if a.Host == "" {
		a.Host = auth.Wildcard
	}
	return a
}

// sameUser reports whether the brokers' user is want: the same credential
// (by its salt and iterations, which are random per derivation) or none,
// and the same rules.
func sameUser(have *brokerclient.User, want brokerclient.PutUserRequest) bool {
	switch {
	case want.SCRAM == nil && have.SCRAM != nil, want.SCRAM != nil && have.SCRAM == nil:
		return false
	case want.SCRAM != nil && (string(have.SCRAM.Salt) != string(want.SCRAM.Salt) || have.SCRAM.Iterations != want.SCRAM.Iterations):
		return false
	}
	return slices.EqualFunc(have.ACLs, want.ACLs, func(a, b auth.ACL) bool {
		a, b = normalACL(a), normalACL(b)
		return a.Resource == b.Resource && a.Name == b.Name && a.Pattern == b.Pattern && a.Permission == b.Permission &&
			a.Host == b.Host && slices.Equal(a.Operations, b.Operations)
	})
}

// putOnBrokers makes the brokers hold the user as want, reading it first so
// that nothing is written when they already do. It reports whether it wrote.
func putOnBrokers(ctx context.Context, bc *brokerclient.Client, name string, want brokerclient.PutUserRequest) (bool, error) {
	have, err := bc.User(ctx, name)
	switch {
	case err == nil && sameUser(have, want):
		return false, nil
	case err != nil && !api.IsCode(err, api.CodeNotFound):
		return false, err
	}
	return true, bc.PutUser(ctx, name, want)
}

// deleteFromBrokers removes the user; one the brokers do not know is gone
// already.
func deleteFromBrokers(ctx context.Context, bc *brokerclient.Client, name string) error {
	if err := bc.DeleteUser(ctx, name); err != nil && !api.IsCode(err, api.CodeNotFound) {
		return err
	}
	return nil
}
