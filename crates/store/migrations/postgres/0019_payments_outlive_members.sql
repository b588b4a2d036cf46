-- A deleted member's payments stay, with no member (`delete_member` of POST
-- /members/access). A null user_id leaves the (org_id, user_id) foreign key unchecked.
ALTER TABLE payments ALTER COLUMN user_id DROP NOT NULL;
