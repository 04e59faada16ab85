
ByJ­W‡U¡ÐtXQV4Û