// Package hostile holds the tests that attack real KairoLog broker
// processes from outside, as careless or hostile clients would, and check
// that they stay available and truthful: no 5xx but retriable 503s (with a
// Retry-After), no 4xx that says something false, memory under a stated
// bound, and normal requests served meanwhile.
//
// TestMemoryStaysBounded (memory_test.go) opens 2000 connections that send
// a 1 MiB produce body a kilobyte every half second, and has 20 clients
// send 16 MiB produce bodies without pause, while a normal producer
// produces one record every 100 ms; the broker's peak RSS (VmHWM) must stay
// under rssBoundMiB, every normal record must be stored exactly once, and
// no slow connection may stay open much past client.io.timeout.ms.
//
// TestStartupAnswersTruthfully (outside_test.go) runs the seed's script
// ("poll /health, then create the topic") against a broker process that has
// only just started, while other clients read its metadata.
//
// TestHostileClientsFromOutside (outside_test.go) attacks a three-broker
// cluster with every hostile case at once: broker-to-broker paths on the
// client port (404) and on the peer port without the cluster secret (401),
// changes to __consumer_offsets through every broker (403), half the slow
// and large bodies of TestMemoryStaysBounded against one broker while a
// normal producer produces through it, and a broker killed with SIGKILL and
// started again, read from the moment its port accepts. Afterwards the
// group's committed offset, the internal topic's config and every
// acknowledged record must be intact. It logs every kind of request with
// the answers it got, and the figures.
//
//	go test ./test/hostile -v -count=1
//
// The tests raise the process's open-file limit for the connections they
// open (the brokers they start inherit it), and are skipped with -short.
package hostile
