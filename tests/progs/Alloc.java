import java.util.*;
public class Alloc {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        long total = Long.parseLong(a.length > 1 ? a[1] : "4000000");
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final long mine = total / n;
            ts[i] = new Thread(() -> {
                ArrayList<int[]> keep = new ArrayList<>();
                long sum = 0;
                for (long k = 0; k < mine; k++) {
                    int[] x = new int[16 + (int)(k % 48)];
                    x[0] = (int)k;
                    sum += x.length;
                    if (k % 8 == 0) keep.add(x);
                    if (keep.size() > 20000) keep = new ArrayList<>();
                }
                if (sum == 42) System.out.println(sum);
            }, "app-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
    }
}
