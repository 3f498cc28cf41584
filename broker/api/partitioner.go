package api

// KeyPartition is Kafka's default partitioner for a keyed record:
// toPositive(murmur2(key)) % partitions. The broker places keyed records
// without a partition with it; a client that routes records to partition
// leaders itself uses it to put a key where the broker would.
func KeyPartition(key []byte, partitions int32) int32 {
	return toPositive(murmur2(key)) % partitions
}

// murmur2 is Kafka's Utils.murmur2: the 32-bit MurmurHash2 with Kafka's seed,
// computed on signed 32-bit arithmetic exactly as the Java code does, so a
// key lands on the partition a Kafka client would pick.
func murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	length := len(data)
	h := seed ^ uint32(length)
	n4 := length / 4
	for i := 0; i < n4; i++ {
		i4 := i * 4
		k := uint32(data[i4]) | uint32(data[i4+1])<<8 | uint32(data[i4+2])<<16 | uint32(data[i4+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := length &^ 3
	switch length % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// toPositive is Kafka's Utils.toPositive: it clears the sign bit rather than
// taking an absolute value, so math.MinInt32 maps to 0.
func toPositive(n int32) int32 { return n & 0x7fffffff }
