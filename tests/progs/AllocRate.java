import java.util.ArrayList;
import java.util.concurrent.atomic.LongAdder;

// AllocRate N PERIOD_MS [SECONDS]: N application threads allocate as Alloc
// does (short-lived int[] of 16-63 ints, one in eight kept a while), without
// end; every PERIOD_MS the main thread prints "T COUNT": System.nanoTime()
// (CLOCK_MONOTONIC on Linux) and the allocations done so far, in steps of
// 1024.  It runs until killed, or SECONDS.  schedtrace/measure-overhead-steady.py
// reads its progress to compare traced and untraced windows of one run.
public class AllocRate {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        long period = Long.parseLong(a[1]);
        long seconds = a.length > 2 ? Long.parseLong(a[2]) : Long.MAX_VALUE / 2_000_000_000L;
        LongAdder done = new LongAdder();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                ArrayList<int[]> keep = new ArrayList<>();
                long sum = 0;
                for (long k = 0;; k++) {
                    int[] x = new int[16 + (int)(k % 48)];
                    x[0] = (int)k;
                    sum += x.length;
                    if (k % 8 == 0) keep.add(x);
                    if (keep.size() > 20000) keep = new ArrayList<>();
                    if ((k & 1023) == 1023) done.add(1024);
                    if (sum == 42) System.out.println(sum);
                }
            }, "app-" + i);
            t.setDaemon(true);
            t.start();
        }
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            Thread.sleep(period);
            System.out.println(System.nanoTime() + " " + done.sum());
        }
    }
}
