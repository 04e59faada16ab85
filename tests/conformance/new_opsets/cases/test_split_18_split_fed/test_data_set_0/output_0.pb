BaJb
/¿!bq=