import { PGlite } from '@electric-sql/pglite';
let t=performance.now();
const db = await PGlite.create();
console.log('create', performance.now()-t);
t=performance.now();
const db2 = await PGlite.create();
console.log('create2', performance.now()-t);
t=performance.now();
if (db.clone) { const c = await db.clone(); console.log('clone', performance.now()-t); }
console.log((await db.query("select version(), gen_random_uuid()")).rows);
