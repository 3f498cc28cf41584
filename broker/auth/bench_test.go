package auth

import "testing"

// BenchmarkVerifyPassword is one check of a password against its
// credential: PBKDF2-HMAC-SHA-512 with 4096 iterations, what a SCRAM login
// or an HTTP Basic request without the cache costs.
func BenchmarkVerifyPassword(b *testing.B) {
	c, err := NewCredential("bench-pw", MinIterations)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !c.Verify("bench-pw") {
			b.Fatal("does not verify")
		}
	}
}

// BenchmarkPasswordCacheHit is the same check answered by the cache, as
// every HTTP Basic request after the first with a password is.
func BenchmarkPasswordCacheHit(b *testing.B) {
	c, err := NewCredential("bench-pw", MinIterations)
	if err != nil {
		b.Fatal(err)
	}
	u := &User{Name: "bench", SCRAM: &c}
	var cache PasswordCache
	cache.Verify(u, "bench-pw")
	for b.Loop() {
		if !cache.Verify(u, "bench-pw") {
			b.Fatal("does not verify")
		}
	}
}

// BenchmarkAllowed is one ACL decision against a user of 20 rules.
func BenchmarkAllowed(b *testing.B) {
	u := &User{Name: "bench"}
	for i := 0; i < 19; i++ {
		u.ACLs = append(u.ACLs, ACL{Resource: ResourceTopic, Name: "other-" + string(rune('a'+i)), Operations: []Operation{OpRead}})
	}
	u.ACLs = append(u.ACLs, ACL{Resource: ResourceTopic, Name: "orders", Pattern: PatternPrefix, Operations: []Operation{OpWrite}})
	a := Authorizer{}
	need := Need{Resource: ResourceTopic, Name: "orders-eu", Op: OpWrite}
	for b.Loop() {
		if !a.Allowed(Principal{Name: "bench"}, u, "10.0.0.1", need) {
			b.Fatal("refused")
		}
	}
}
