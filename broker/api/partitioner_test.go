package api

import "testing"

// The expected hashes are Kafka's own test vectors for Utils.murmur2
// (clients/src/test/.../UtilsTest.testMurmur2) plus values computed with
// the Java implementation for short numeric strings.
func TestMurmur2MatchesKafka(t *testing.T) {
	cases := []struct {
		in   []byte
		want int32
	}{
		{[]byte("21"), -973932308},
		{[]byte("foobar"), -790332482},
		{[]byte("a-little-bit-long-string"), -985981536},
		{[]byte("a-little-bit-longer-string"), -1486304829},
		{[]byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
		{[]byte{'a', 'b', 'c'}, 479470107},
		{[]byte("1"), -1993445489},
		{[]byte("12"), 126087238},
		{[]byte("123"), -267702483},
		{[]byte("1234"), -1614185708},
		{[]byte("12345"), -1188365604},
	}
	for _, c := range cases {
		if got := murmur2(c.in); got != c.want {
			t.Errorf("murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestToPositiveIsKafkas(t *testing.T) {
	if toPositive(-2147483648) != 0 || toPositive(-1) != 0x7fffffff {
		t.Error("toPositive must clear the sign bit, as Kafka's Utils.toPositive")
	}
}

func TestKeyPartitionIsKafkasDefault(t *testing.T) {
	// toPositive(-973932308) = 1173551340; 1173551340 % 4 = 0.
	cases := []struct {
		key        string
		partitions int32
		want       int32
	}{
		{"21", 4, int32(1173551340 % 4)},
		{"foobar", 3, int32((-790332482 & 0x7fffffff) % 3)},
		{"abc", 10, int32(479470107 % 10)},
	}
	for _, c := range cases {
		if got := KeyPartition([]byte(c.key), c.partitions); got != c.want {
			t.Errorf("KeyPartition(%q, %d) = %d, want %d", c.key, c.partitions, got, c.want)
		}
	}
}
