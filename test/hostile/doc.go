// Package hostile holds the tests that attack a real KairoLog broker
// process from outside, as a careless or hostile client would, and check
// that it stays available and truthful: no 5xx but retriable 503s, no 4xx
// that says something false, memory under a stated bound, and normal
// requests served meanwhile.
//
// TestMemoryStaysBounded (memory_test.go) opens 2000 connections that send
// a 1 MiB produce body a kilobyte at a time, and has 20 clients send 16 MiB
// produce bodies without pause, while a normal producer produces one record
// every 100 ms; the broker's peak RSS (VmHWM) must stay under
// rssBoundMiB, every normal record must be stored exactly once, and no slow
// connection may stay open much past client.io.timeout.ms.
//
//	go test ./test/hostile -run TestMemoryStaysBounded -v -count=1
//
// The tests raise the process's open-file limit for the connections they
// open (the brokers they start inherit it), and are skipped with -short.
package hostile
