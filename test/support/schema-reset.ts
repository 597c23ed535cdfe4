import type { Queryable } from '../../lib/db/database.js';

/**
 * What a test may change in a PostgreSQL target's `public` schema besides its rows, as one digest:
 * every relation (kind, owner, grants, options, row security), column (type, default, NOT NULL,
 * generated, grants), constraint, index, trigger, rule, policy, function, type, sequence,
 * extended statistic and the schema's own owner and grants, with the database's default
 * privileges. Two equal digests mean the same schema up to object ids.
 */
const SHAPE_SQL = `SELECT md5(coalesce(string_agg(item, E'\\n' ORDER BY item), '')) AS shape FROM (
  SELECT format('ns %s %s', nspowner::regrole, nspacl) AS item FROM pg_namespace WHERE nspname = 'public'
  UNION ALL SELECT format('rel %s %s %s %s %s %s %s %s %s', relname, relkind, relowner::regrole, relpersistence,
      relrowsecurity, relforcerowsecurity, relreplident, relacl, reloptions)
    FROM pg_class WHERE relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('att %s %s %s %s %s %s %s %s %s %s %s', c.relname, a.attnum, a.attname,
      format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attisdropped, a.attgenerated, a.attidentity,
      a.attcollation, a.attacl, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0
  UNION ALL SELECT format('con %s %s %s %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid),
      convalidated, condeferrable, condeferred)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL SELECT format('idx %s %s %s', pg_get_indexdef(i.indexrelid), i.indisvalid, i.indisready)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('trg %s %s', pg_get_triggerdef(t.oid), t.tgenabled)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('rule %s', pg_get_ruledef(r.oid))
    FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('pol %s %s %s %s %s %s %s', p.polname, p.polrelid::regclass, p.polcmd, p.polpermissive,
      p.polroles, pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
    FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('fn %s %s %s %s', oid::regprocedure, proowner::regrole, proacl,
      CASE WHEN prokind IN ('f', 'p') THEN md5(pg_get_functiondef(oid)) ELSE prokind::text END)
    FROM pg_proc WHERE pronamespace = 'public'::regnamespace
  UNION ALL SELECT format('type %s %s %s %s', typname, typtype, typowner::regrole, typacl)
    FROM pg_type WHERE typnamespace = 'public'::regnamespace
  UNION ALL SELECT format('seq %s %s %s %s %s %s', s.seqrelid::regclass, s.seqstart, s.seqincrement, s.seqmin,
      s.seqmax, s.seqcycle)
    FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = 'public'::regnamespace
  UNION ALL SELECT format('stx %s', stxname) FROM pg_statistic_ext WHERE stxnamespace = 'public'::regnamespace
  UNION ALL SELECT format('opr %s', oid::regoperator) FROM pg_operator WHERE oprnamespace = 'public'::regnamespace
  UNION ALL SELECT format('coll %s', collname) FROM pg_collation WHERE collnamespace = 'public'::regnamespace
  UNION ALL SELECT format('dacl %s %s %s %s', defaclrole::regrole, defaclnamespace, defaclobjtype, defaclacl)
    FROM pg_default_acl
) AS items`;

/**
 * In one round trip: the schema's digest, what a test leaves behind that the digest does not show
 * (planner statistics: an ANALYZE, or autovacuum's, would change the next test's plans; a sequence
 * that was advanced), and the tables holding any page, written to since they were created (a
 * fresh table has none; a test's rows, even deleted, leave some).
 */
const STATE_SQL = `SELECT (${SHAPE_SQL}) AS shape,
  EXISTS (SELECT 1 FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid
          WHERE c.relnamespace = 'public'::regnamespace) AS analyzed,
  EXISTS (SELECT 1 FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL) AS advanced,
  (SELECT string_agg(format('%I', relname), ', ' ORDER BY relname) FROM pg_class
    WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND pg_relation_size(oid) > 0) AS written`;

/** The digest of the schema as a fresh test database's setup left it. */
export async function schemaShape(db: Queryable): Promise<string> {
  const rows = await db.query<{ shape: string }>(SHAPE_SQL);
  return rows[0]!.shape;
}

/**
 * Empties the `public` schema's tables when the schema is still exactly `shape` (the previous
 * test changed rows only) and nothing else it left would show: the next test then starts from the
 * database a DROP SCHEMA and the fixture's DDL would give it (TRUNCATE gives each table it empties
 * new, empty files, as CREATE TABLE does), in one statement instead of dozens of DDL statements.
 * Returns false, touching nothing, when the schema has changed.
 */
export async function emptyIfUnchanged(db: Queryable, shape: string): Promise<boolean> {
  const rows = await db.query<{ shape: string; analyzed: boolean; advanced: boolean; written: string | null }>(
    STATE_SQL,
  );
  const state = rows[0]!;
  if (state.shape !== shape || state.analyzed || state.advanced) return false;
  if (state.written !== null) await db.query(`TRUNCATE ${state.written} RESTART IDENTITY CASCADE`);
  return true;
}
