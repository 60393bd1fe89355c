// Graphs.java -- a heap whose object graph is known exactly, for the HPROF
// import test (tests/cli/test_import.sh).  java Graphs list N | tree D |
// random N K SEED builds the shape, holds it in a static field, prints
// "ready" and waits until killed; make.sh dumps it with jcmd GC.heap_dump.
//
//   list N        N ListNode objects, each one reference field (next), the last NULL
//   tree D        a complete binary tree of depth D: 2^D - 1 TreeNode objects, two
//                 reference fields each (left, right), the leaves' NULL
//   random N K S  N RandNode objects, each with a RandNode[K] array whose slots point
//                 to objects chosen by java.util.SplittableRandom(S): N arrays, N*K edges
public class Graphs {
    static final class ListNode { ListNode next; int value; }
    static final class TreeNode { TreeNode left, right; }
    static final class RandNode { RandNode[] out; }

    static Object root;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
        case "list": {
            int n = Integer.parseInt(args[1]);
            ListNode head = null;
            for (int i = 0; i < n; i++) {
                ListNode x = new ListNode();
                x.next = head;
                x.value = i;
                head = x;
            }
            root = head;
            break;
        }
        case "tree":
            root = tree(Integer.parseInt(args[1]));
            break;
        case "random": {
            int n = Integer.parseInt(args[1]), k = Integer.parseInt(args[2]);
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(Long.parseLong(args[3]));
            RandNode[] all = new RandNode[n];
            for (int i = 0; i < n; i++)
                all[i] = new RandNode();
            for (int i = 0; i < n; i++) {
                all[i].out = new RandNode[k];
                for (int j = 0; j < k; j++)
                    all[i].out[j] = all[rnd.nextInt(n)];
            }
            root = all[0];  // the holder array itself is dropped: only what 0 reaches stays
            // keep every node reachable for an exact count: a ring through out[0]'s owner
            for (int i = 0; i < n; i++)
                all[i].out[0] = all[(i + 1) % n];
            all = null;
            break;
        }
        default:
            throw new IllegalArgumentException(args[0]);
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(600_000);
    }

    static TreeNode tree(int d) {
        if (d == 0)
            return null;
        TreeNode t = new TreeNode();
        t.left = tree(d - 1);
        t.right = tree(d - 1);
        return t;
    }
}
