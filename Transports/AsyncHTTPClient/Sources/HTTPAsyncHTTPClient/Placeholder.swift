import HTTP
