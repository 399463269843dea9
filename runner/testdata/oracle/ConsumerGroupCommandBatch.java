// Runs Apache Kafka's ConsumerGroupCommand (kafka-consumer-groups.sh) once per
// line of standard input, in one JVM: the differential test (oracle_test.go)
// asks it dozens of questions, and a JVM per question would cost it seconds
// each. Each line is the tool's arguments, separated by tabs. For each, this
// writes "END <exit code> <byte count>\n" and then that many bytes: all the
// tool printed, standard output and error together. The exit code is the
// tool's own (it exits 1 on bad usage) or 0 when main returns; an uncaught
// exception is 99.
//
// Run as: java -cp '<kafka libs>/*' ConsumerGroupCommandBatch.java
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.consumer.group.ConsumerGroupCommand;

public class ConsumerGroupCommandBatch {
    /** Thrown in place of System.exit, so that one question cannot end the JVM. */
    static final class Exited extends RuntimeException {
        final int code;

        Exited(int code) {
            super("exit " + code);
            this.code = code;
        }
    }

    public static void main(String[] unused) throws Exception {
        Exit.setExitProcedure((code, message) -> {
            throw new Exited(code);
        });
        Exit.setHaltProcedure((code, message) -> {
            throw new Exited(code);
        });
        PrintStream out = System.out;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream captured = new PrintStream(buf, true, StandardCharsets.UTF_8);
            System.setOut(captured);
            System.setErr(captured);
            int code = 0;
            try {
                ConsumerGroupCommand.main(line.split("\t"));
            } catch (Exited e) {
                code = e.code;
            } catch (Throwable t) {
                t.printStackTrace(captured);
                code = 99;
            }
            captured.flush();
            byte[] b = buf.toByteArray();
            out.print("END " + code + " " + b.length + "\n");
            out.write(b);
            out.flush();
        }
    }
}
