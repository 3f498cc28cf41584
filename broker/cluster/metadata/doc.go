// Package metadata holds the cluster metadata of KairoLog — brokers,
// topics, replica placement, leaders, leader epochs, ISRs and topic
// configs — as an immutable Image, and the deterministic state machine
// (Image.Apply) that the metadata quorum replicates.
//
// Nothing here does I/O or reads the clock: the raft layer in package
// cluster feeds commands in log order, and every broker computes the same
// images. Decisions that need judgement (where replicas go, which
// partitions a drain moves) are made by the controller with a Planner
// before it proposes a command, and Apply only validates and records them.
package metadata
