// graphs.js -- a heap whose object graph is known exactly, for the V8 heap
// snapshot import test (tests/cli/test_import_v8.sh, tests/test_v8snap.c): the
// counterpart of ../hprof/Graphs.java.  node graphs.js SHAPE ARGS... OUT builds
// the shape, holds it in a global and writes OUT with v8.writeHeapSnapshot().
//
//   list N        N ListNode objects, each one reference (next), the last null
//   tree D        a complete binary tree of depth D: 2^D - 1 TreeNode objects,
//                 two references each (left, right), the leaves' null
//   random N K S  N RandNode objects, each with an Array of K slots (out) whose
//                 slots point to nodes chosen by mulberry32(S), slot 0 to the
//                 next node in a ring so that every node stays reachable
'use strict';
const v8 = require('v8');

class ListNode { constructor(next, value) { this.next = next; this.value = value; } }
class TreeNode { constructor(left, right) { this.left = left; this.right = right; } }
class RandNode { constructor(k) { this.out = new Array(k).fill(null); } }

function tree(d) { return d === 0 ? null : new TreeNode(tree(d - 1), tree(d - 1)); }

function mulberry32(a) {
    return function () {
        a = (a + 0x6D2B79F5) | 0;
        let t = Math.imul(a ^ (a >>> 15), 1 | a);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const [shape, ...rest] = process.argv.slice(2);
const out = rest.pop();
if (shape === 'list') {
    let head = null;
    for (let i = 0; i < +rest[0]; i++) head = new ListNode(head, i);
    globalThis.gcscaleRoot = head;
} else if (shape === 'tree') {
    globalThis.gcscaleRoot = tree(+rest[0]);
} else if (shape === 'random') {
    const n = +rest[0], k = +rest[1], rnd = mulberry32(+rest[2]);
    const all = [];
    for (let i = 0; i < n; i++) all.push(new RandNode(k));
    for (let i = 0; i < n; i++)
        for (let j = 1; j < k; j++) all[i].out[j] = all[Math.floor(rnd() * n)];
    for (let i = 0; i < n; i++) all[i].out[0] = all[(i + 1) % n];
    // all[0] reaches every node; the holder array `all` is live too while
    // the snapshot is written (a local of this module's function)
    globalThis.gcscaleRoot = all[0];
} else {
    throw new Error('unknown shape ' + shape);
}
v8.writeHeapSnapshot(out);
