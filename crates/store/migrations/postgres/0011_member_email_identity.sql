-- Members are matched by the identity of their address: only ASCII letters are folded to
-- lower case, every other character must match as written, so two different addresses
-- never name one member. Until now `email_lower` held the address lower-cased with full
-- Unicode rules, under which the Kelvin sign (U+212A) met `k` and a dotted capital I
-- (U+0130) met `i` followed by U+0307. Recompute it for the rows stored before.
--
-- No two members of an organization can collide, neither at the end nor row by row
-- during the update (the unique index is checked at each row):
-- * Unicode lower-casing treats an ASCII letter alike in either case, so
--   lower(ascii(e)) = lower(e). Two addresses with one new value therefore had one old
--   value, which the unique index refused: distinct before stays distinct after.
-- * Lower-casing is idempotent, so a new value ascii(a) equal to another row's old value
--   lower(b) gives lower(a) = lower(ascii(a)) = lower(lower(b)) = lower(b): the same old
--   value, hence the same row.
-- translate() maps exactly the 26 ASCII letters, whatever the database's locale.
UPDATE members
   SET email_lower = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
 WHERE email_lower <> translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
