-- Run by PostgreSQL's entrypoint (psql, as the superuser) on the first start of an empty volume.
-- One login role per service, owning only its database (gantry.db.name in each service's
-- application.properties); no one else may connect to it. User names and passwords come from the
-- environment (postgresql.yaml: the Secrets gantry-db-<user> the services' Deployments read too).
\getenv admission_user GANTRY_DB_USER_ADMISSION
\getenv admission_password GANTRY_DB_PASSWORD_ADMISSION
CREATE ROLE :"admission_user" LOGIN PASSWORD :'admission_password';
CREATE DATABASE gantry_admission OWNER :"admission_user";
REVOKE ALL ON DATABASE gantry_admission FROM PUBLIC;

\getenv quota_user GANTRY_DB_USER_QUOTA
\getenv quota_password GANTRY_DB_PASSWORD_QUOTA
CREATE ROLE :"quota_user" LOGIN PASSWORD :'quota_password';
CREATE DATABASE gantry_quota OWNER :"quota_user";
REVOKE ALL ON DATABASE gantry_quota FROM PUBLIC;

\getenv inventory_user GANTRY_DB_USER_INVENTORY
\getenv inventory_password GANTRY_DB_PASSWORD_INVENTORY
CREATE ROLE :"inventory_user" LOGIN PASSWORD :'inventory_password';
CREATE DATABASE gantry_inventory OWNER :"inventory_user";
REVOKE ALL ON DATABASE gantry_inventory FROM PUBLIC;

\getenv placement_user GANTRY_DB_USER_PLACEMENT
\getenv placement_password GANTRY_DB_PASSWORD_PLACEMENT
CREATE ROLE :"placement_user" LOGIN PASSWORD :'placement_password';
CREATE DATABASE gantry_placement OWNER :"placement_user";
REVOKE ALL ON DATABASE gantry_placement FROM PUBLIC;
