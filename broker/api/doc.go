// Package api is the broker's shared vocabulary: the error codes every
// reply carries, the one table of HTTP statuses they map to, and the Error
// type. It is a leaf (it imports nothing of the broker), so the front
// doors, the peer transport between brokers (broker/peer), the packages
// below them and the clients all speak the same codes: NOT_LEADER is 421
// wherever it appears, whichever package produced it.
package api
