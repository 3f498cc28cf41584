// Package kafka tests the brokers' Kafka listeners with Kafka's own
// clients: franz-go's kgo and kadm, against real broker processes started
// by internal/brokertest, directly and through the Kafka gateway. Nothing
// here is faked: the brokers are the binary cmd/broker builds, the clients
// are the ones applications use. The tests start processes, so go test
// -short skips them.
package kafka
