// N worker threads share a fixed amount of allocation-heavy work.
const { Worker, isMainThread, workerData } = require('worker_threads');
function work(n) {
  let keep = [], sum = 0;
  for (let k = 0; k < n; k++) {
    const o = { a: k, b: [k, k + 1, k + 2], s: 'x' + (k % 1000) };
    sum += o.b.length;
    if (k % 8 === 0) keep.push(o);
    if (keep.length > 50000) keep = [];
  }
  return sum;
}
if (isMainThread) {
  const n = parseInt(process.argv[2] || '2'), total = parseInt(process.argv[3] || '4000000');
  let done = 0;
  for (let i = 0; i < n; i++) {
    const w = new Worker(__filename, { workerData: total / n });
    w.on('exit', () => { done++; });
  }
} else {
  work(workerData);
}
