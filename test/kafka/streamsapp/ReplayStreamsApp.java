// A real Kafka Streams application for kafka-replay's tests: it counts the
// records of an input topic by value. map re-keys each record by its value,
// so groupByKey goes through a repartition topic (<application.id>-rekey-
// repartition), and count keeps its state in a store with a changelog
// (<application.id>-counts-changelog): the two kinds of internal topic
// kafka-streams-groups.sh --delete-all-internal-topics deletes. The counts
// go to an output topic.
//
//   java -cp 'CLASSES:LIBS/*' ReplayStreamsApp BOOTSTRAP APPLICATION_ID INPUT OUTPUT PROTOCOL STATE_DIR
//
// PROTOCOL is streams (KIP-1071, a streams group) or classic (a classic
// consumer group named after the application.id). It prints RUNNING once
// the application runs, and closes (leaving the group) when its standard
// input ends: a test stops it by closing the pipe, or kills it.
import java.io.InputStream;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public final class ReplayStreamsApp {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: ReplayStreamsApp BOOTSTRAP APPLICATION_ID INPUT OUTPUT PROTOCOL STATE_DIR");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, args[4]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[5]);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // Commit often, so that a test sees the offsets soon after the
        // records are processed; one thread keeps the JVM small.
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        // Process what is already in the input topic.
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(args[2])
            .map((k, v) -> KeyValue.pair(v, v))
            .groupByKey(Grouped.as("rekey"))
            .count(Materialized.as("counts"))
            .toStream()
            .mapValues(n -> Long.toString(n))
            .to(args[3], Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(b.build(), p);
        CountDownLatch failed = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println(now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR) {
                failed.countDown();
            }
        });
        streams.start();
        Thread stdin = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() >= 0) {
                    // Anything written is ignored: only the end counts.
                }
            } catch (Exception e) {
                // A broken pipe is an end too.
            }
            failed.countDown();
        });
        stdin.setDaemon(true);
        stdin.start();
        failed.await();
        // Leaving the group: Kafka Streams stays a member on close by
        // default (a restart then takes its tasks back without a
        // rebalance), and the group would stay non-empty until the
        // session timed out.
        boolean closed = streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(30)));
        System.out.println(closed ? "CLOSED" : "NOT_CLOSED");
        System.out.flush();
        System.exit(streams.state() == KafkaStreams.State.NOT_RUNNING && closed ? 0 : 1);
    }
}
