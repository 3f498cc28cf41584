// Package fault holds the process-level fault tests of a replicated
// KairoLog cluster. TestKillLeaderLoop (fault_test.go) builds cmd/broker,
// runs three broker processes on their own loopback addresses and data
// directories, produces with acks=all and commits group offsets without
// pause while it kills the leader of the produced partition with SIGKILL
// round after round and restarts it, then reads every replica's log from disk and checks that no
// acknowledged record was lost or duplicated, that the replicas are
// byte-identical up to the high watermark and that the committed offsets
// survived. It reports the acknowledged and lost counts and the failover
// time (kill to the first acknowledged acks=all produce) with t.Logf; no
// figure is asserted except that nothing acknowledged was lost.
//
//	go test ./test/fault -run TestKillLeaderLoop -v -count=1
//
// TestRecreateTopicWhileAway (recreate_test.go) takes one broker away —
// SIGSTOP or SIGKILL, the partition's leader or a follower — while a topic
// with 100 records is deleted, brings it back and at once creates the
// topic again and gives it 5 records, and checks that no fetch through any
// broker returns a record of the deleted topic and that every replica,
// read from disk at the end, holds exactly the new topic's records.
//
//	go test ./test/fault -run TestRecreateTopicWhileAway -v -count=1
//
// TestNemesis (nemesis_test.go, load in nemesis_load_test.go) is the
// bounded nemesis run: three brokers under acks=all producers and
// consumers, a topic deleted and created again over and over, and records
// stamped two days old on a topic with one hour of retention, while one
// broker at a time is killed with SIGKILL and restarted, or stopped with
// SIGSTOP for 1.5 s (shorter than the 2.5 s session timeout) or 5 s
// (longer). At the end every replica must be back in the ISR, every
// acknowledged record at its offset exactly once on every replica's disk,
// no acknowledged record of a deleted topic served by a fetch sent after
// the deletion, the log start never past the high watermark, and no reply
// a 5xx other than a retriable 503. It logs the counts: acknowledged,
// lost, duplicated, resurrected, 503s and other 5xx.
//
//	go test ./test/fault -run TestNemesis -v -count=1
//
// TestExactlyOnceThroughKills (exactlyonce_test.go) runs four idempotent
// producers (client.Producer, acks=all) against a topic of two partitions
// through a front that sends each request to a running broker in turn,
// while it kills the leader of partition 0 (six rounds) and then the
// controller (two rounds) with SIGKILL and restarts them. The producers
// resend every request that timed out, lost its connection or got a
// retriable 503 with its sequence. Every replica's log, read from disk,
// must hold each sent record at most once and each acknowledged one at
// its offset; it logs the counts and the resends the brokers answered as
// duplicates.
//
//	go test ./test/fault -run TestExactlyOnceThroughKills -v -count=1
//
// The tests are skipped with -short. NEMESIS_SECONDS sets how long the
// nemesis runs (default 90); FAULT_ROUNDS changes the number of
// rounds that kill the partition leader (default 10; 6 in
// TestExactlyOnceThroughKills), FAULT_CONTROLLER_ROUNDS those that then
// kill the controller (default 3; 2).
package fault
