package core

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// collector turns the broker's state into Prometheus series at scrape time:
// per-partition offsets and sizes of the replicas this broker hosts, their
// traffic counters, and the lag of the groups this broker coordinates.
type collector struct {
	b *Broker

	partitions, leaders, controller, ready        *prometheus.Desc
	leo, hw, logStart, size, isr, replicas, under *prometheus.Desc
	offline, flushes                              *prometheus.Desc
	bytesIn, recordsIn, bytesOut, recordsOut      *prometheus.Desc
	replBytesOut, isrShrinks, isrExpands          *prometheus.Desc
	groupMembers, groupLag, groupPartitionLag     *prometheus.Desc
	peerRequests                                  *prometheus.Desc
}

// Collector exposes the broker's gauges and counters to a registry.
func (b *Broker) Collector() prometheus.Collector {
	pl := []string{"topic", "partition"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, prometheus.Labels{"broker": strconv.Itoa(int(b.id))})
	}
	return &collector{b: b,
		partitions:   d("kairo_partitions", "Partition replicas hosted by this broker."),
		leaders:      d("kairo_partition_leaders", "Partitions this broker leads."),
		controller:   d("kairo_controller", "1 when this broker is the controller."),
		ready:        d("kairo_ready", "1 when this broker is ready to serve."),
		leo:          d("kairo_log_end_offset", "Log end offset of a hosted replica.", pl...),
		hw:           d("kairo_high_watermark", "High watermark of a hosted replica.", pl...),
		logStart:     d("kairo_log_start_offset", "Log start offset of a hosted replica.", pl...),
		size:         d("kairo_log_size_bytes", "Bytes on disk of a hosted replica.", pl...),
		offline:      d("kairo_partition_offline", "1 when a hosted replica is offline because an fsync of its log failed; it serves nothing until the broker restarts.", pl...),
		flushes:      d("kairo_partition_log_flushes_total", "fsyncs of a hosted replica's log made by its flush policy (flush.messages, flush.ms); produces written together share one.", pl...),
		isr:          d("kairo_partition_isr", "In-sync replicas of a partition this broker leads.", pl...),
		replicas:     d("kairo_partition_replicas", "Replicas of a partition this broker leads.", pl...),
		under:        d("kairo_partition_under_replicated", "1 when a partition this broker leads has fewer in-sync replicas than replicas.", pl...),
		bytesIn:      d("kairo_partition_bytes_in_total", "Bytes produced to a partition this broker leads: keys and values of records it encoded, the encoded records of those that came encoded (a Kafka producer's batch, records another broker passed on).", pl...),
		recordsIn:    d("kairo_partition_records_in_total", "Records produced to a partition this broker leads.", pl...),
		bytesOut:     d("kairo_partition_bytes_out_total", "Key and value bytes fetched by consumers.", pl...),
		recordsOut:   d("kairo_partition_records_out_total", "Records fetched by consumers.", pl...),
		replBytesOut: d("kairo_partition_replication_bytes_out_total", "Batch bytes sent to followers.", pl...),
		isrShrinks:   d("kairo_partition_isr_shrinks_total", "ISR shrinks while this broker led.", pl...),
		isrExpands:   d("kairo_partition_isr_expands_total", "ISR expansions while this broker led.", pl...),
		groupMembers: d("kairo_group_members", "Members of a group this broker coordinates.", "group"),
		groupLag:     d("kairo_group_lag", "Total lag of a group this broker coordinates.", "group"),
		groupPartitionLag: d("kairo_group_partition_lag", "Lag of one committed partition of a group.",
			"group", "topic", "partition"),
		peerRequests: d("kairo_peer_requests_total", "Requests other brokers made to this broker's peer listener, by operation.", "op"),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.partitions, c.leaders, c.controller, c.ready, c.leo, c.hw, c.logStart,
		c.size, c.offline, c.flushes, c.isr, c.replicas, c.under, c.bytesIn, c.recordsIn, c.bytesOut, c.recordsOut, c.replBytesOut,
		c.isrShrinks, c.isrExpands, c.groupMembers, c.groupLag, c.groupPartitionLag, c.peerRequests} {
		ch <- d
	}
}

// metricsLagTimeout bounds the group lag reads of one scrape.
const metricsLagTimeout = 5 * time.Second

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	counter := func(d *prometheus.Desc, v int64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	b := c.b
	gauge(c.controller, boolf(b.node.IsController()))
	gauge(c.ready, boolf(b.Ready() == nil))
	stats := b.replicas.Stats()
	leaders := 0
	for _, s := range stats {
		l := []string{s.Topic, strconv.Itoa(int(s.Partition))}
		gauge(c.leo, float64(s.LogEndOffset), l...)
		gauge(c.hw, float64(s.HighWatermark), l...)
		gauge(c.logStart, float64(s.LogStartOffset), l...)
		gauge(c.size, float64(s.SizeBytes), l...)
		gauge(c.offline, boolf(s.Offline), l...)
		counter(c.flushes, s.LogFlushes, l...)
		if !s.IsLeader {
			continue
		}
		leaders++
		gauge(c.isr, float64(len(s.ISR)), l...)
		gauge(c.replicas, float64(len(s.Replicas)), l...)
		gauge(c.under, boolf(len(s.ISR) < len(s.Replicas)), l...)
		counter(c.bytesIn, s.BytesIn, l...)
		counter(c.recordsIn, s.RecordsIn, l...)
		counter(c.bytesOut, s.BytesOut, l...)
		counter(c.recordsOut, s.RecordsOut, l...)
		counter(c.replBytesOut, s.ReplicationBytesOut, l...)
		counter(c.isrShrinks, s.ISRShrinks, l...)
		counter(c.isrExpands, s.ISRExpands, l...)
	}
	gauge(c.partitions, float64(len(stats)))
	gauge(c.leaders, float64(leaders))
	if m := b.peerMux.Load(); m != nil {
		for op, n := range m.Served() {
			counter(c.peerRequests, n, op)
		}
	}
	// Lag needs every partition's high watermark from its leader: bound the
	// whole scrape's reads, so a slow broker costs missing series, not a
	// scrape that never ends.
	ctx, cancel := context.WithTimeout(b.ctx, metricsLagTimeout)
	defer cancel()
	for _, coord := range b.coords.Loaded() {
		for _, g := range coord.ListGroups() {
			gauge(c.groupMembers, float64(g.Members), g.Group)
			d, err := coord.Describe(ctx, g.Group, nil)
			if err != nil {
				continue
			}
			gauge(c.groupLag, float64(d.TotalLag), g.Group)
			for _, o := range d.Offsets {
				if o.Lag >= 0 {
					gauge(c.groupPartitionLag, float64(o.Lag), g.Group, o.Topic, strconv.Itoa(int(o.Partition)))
				}
			}
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
