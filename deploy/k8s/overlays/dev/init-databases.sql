-- one database per service (gantry.db.name in each service's application.properties)
CREATE DATABASE gantry_admission;
CREATE DATABASE gantry_quota;
CREATE DATABASE gantry_inventory;
CREATE DATABASE gantry_placement;
