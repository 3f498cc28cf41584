// Package auth is who a client is and what it may do, one model for every
// front door: users with SCRAM-SHA-512 credentials (RFC 5802/7677: a salt,
// an iteration count and the derived StoredKey and ServerKey, never the
// password), principals (a user's name, from a password or from a client
// certificate's common name), and Kafka-shaped ACLs on topics, groups and
// the cluster, checked by an Authorizer that lets superusers do anything.
// The users and their ACLs live in the metadata quorum
// (broker/cluster/metadata); this package only holds their shape and the
// checks, and depends on nothing of the broker.
package auth
