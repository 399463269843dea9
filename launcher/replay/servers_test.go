package replay

import (
	"slices"
	"testing"
)

func TestUnitServerSetIsOneSpellingPerServer(t *testing.T) {
	cases := []struct {
		name string
		list string
		want []string
	}{
		{"one", "broker-0:9092", []string{"broker-0:9092"}},
		{"spaces and empty entries", " broker-0:9092 , ,broker-1:9092,", []string{"broker-0:9092", "broker-1:9092"}},
		{"order", "broker-1:9092,broker-0:9092", []string{"broker-0:9092", "broker-1:9092"}},
		{"duplicates", "broker-0:9092,broker-0:9092", []string{"broker-0:9092"}},
		{"upper case", "Broker-0.Kafka.SVC:9092", []string{"broker-0.kafka.svc:9092"}},
		{"PLAINTEXT://", "PLAINTEXT://broker-0:9092", []string{"broker-0:9092"}},
		{"SSL://", "SSL://kafka:9093", []string{"kafka:9093"}},
		{"lower-case ssl://", "ssl://kafka:9093", []string{"kafka:9093"}},
		{"SASL_SSL:// and a duplicate without it", "SASL_SSL://kafka:9093,kafka:9093", []string{"kafka:9093"}},
		{"IPv6", "PLAINTEXT://[FE80::1]:9093,[fe80::1]:9093", []string{"[fe80::1]:9093"}},
		{"a prefix alone", "SSL://", nil},
		{"empty", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := serverSet(c.list); !slices.Equal(got, c.want) {
				t.Fatalf("ServerSet(%q) = %q, want %q", c.list, got, c.want)
			}
		})
	}
}

func TestUnitSameServers(t *testing.T) {
	same := [][2]string{
		{"broker-0:9092,broker-1:9092", " BROKER-1:9092, PLAINTEXT://broker-0:9092,broker-0:9092"},
		{"SSL://kafka:9093", "kafka:9093"},
	}
	for _, p := range same {
		if !SameServers(p[0], p[1]) || ServersKey(p[0]) != ServersKey(p[1]) {
			t.Errorf("%q and %q name the same servers", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"kafka:9092", "kafka:9093"},
		{"broker-0:9092", "broker-0:9092,broker-1:9092"},
		{"kafka-a:9092", "kafka-b:9092"},
	}
	for _, p := range differ {
		if SameServers(p[0], p[1]) || ServersKey(p[0]) == ServersKey(p[1]) {
			t.Errorf("%q and %q do not name the same servers", p[0], p[1])
		}
	}
}

func TestUnitServerListKeepsWhatTheRunnerIsGiven(t *testing.T) {
	if got, want := ServerList(" SSL://Kafka-0:9093 ,, kafka-1:9093 "), []string{"SSL://Kafka-0:9093", "kafka-1:9093"}; !slices.Equal(got, want) {
		t.Fatalf("ServerList = %q, want %q", got, want)
	}
}
